# Sourced by the shell tests that need an S3 server: SeaweedFS (`weed mini`,
# strict SigV4) on 127.0.0.1 with one identity and bucket "data".
#   start_seaweed DIR KEY SECRET
# exits 0 with "SKIP" when SHARDFEED_WEED is missing (1 under CI:
# SHARDFEED_REQUIRE_TF=1 or CI=true); otherwise starts the server in DIR
# (waiting at most 60 s for its port), sets S3 (the port) and WEED_PID, and
# exports AWS_ENDPOINT_URL, the keys and the region. The caller stops it
# (kill $WEED_PID in its EXIT trap).
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# A free port whose +10000 (weed's gRPC port) is free too.
port() { while :; do p=$(free_port); [ $((p + 10000)) -lt 65536 ] && ! (echo > /dev/tcp/127.0.0.1/$((p + 10000))) 2>/dev/null && { echo "$p"; return; }; done; }
start_seaweed() {
  local dir="$1" key="$2" secret="$3" weed="${SHARDFEED_WEED:-}"
  if [ ! -x "$weed" ]; then
    if [ "${SHARDFEED_REQUIRE_TF:-}" = 1 ] || [ "${CI:-}" = true ]; then
      echo "FAIL: SeaweedFS (SHARDFEED_WEED) is required in CI"; exit 1
    fi
    echo "SKIP: no weed binary (SHARDFEED_WEED)"; exit 0
  fi
  mkdir -p "$dir"
  echo "{\"identities\":[{\"name\":\"t\",\"credentials\":[{\"accessKey\":\"$key\",\"secretKey\":\"$secret\"}],\"actions\":[\"Admin\",\"Read\",\"Write\",\"List\"]}]}" >"$dir/s3.json"
  S3=$(port)
  "$weed" mini -dir="$dir" -ip=127.0.0.1 -ip.bind=127.0.0.1 -s3.port="$S3" -s3.config="$dir/s3.json" \
    -bucket=data -master.port="$(port)" -volume.port="$(port)" -filer.port="$(port)" -admin.port="$(port)" \
    -admin.ui=false -webdav=false -s3.port.iceberg=0 -s3.port.lance=0 >"$dir.log" 2>&1 &
  WEED_PID=$!
  for _ in $(seq 1 300); do (echo > "/dev/tcp/127.0.0.1/$S3") 2>/dev/null && break; sleep 0.2; done
  export AWS_ENDPOINT_URL="http://127.0.0.1:$S3" AWS_ACCESS_KEY_ID="$key" AWS_SECRET_ACCESS_KEY="$secret"
  export AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true
}
