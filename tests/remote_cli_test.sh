#!/usr/bin/env bash
# The CLI on s3:// paths against SeaweedFS on loopback (strict SigV4):
# `index --manifest` writes the index files and manifest.json into the
# bucket (manifest last), `check`, `cat --fingerprint` and `bench
# --fingerprint` read the bucket and agree with the same dataset on disk;
# a wrong secret is exit 2 with PERMISSION_DENIED, never the secret, in text
# and --json; --no-sign reads are refused by a private bucket.
# Shards are uploaded with curl's own --aws-sigv4 (an independent client).
set -u
ROOT="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-shardfeed}"
SF="$ROOT/cli/shardfeed"
FX="$ROOT/testdata"
TMP="$(mktemp -d "${TEST_TMPDIR:-/tmp}/remote_cli.XXXXXX")"
passed=0
failed=0
check() {
  local name="$1"; shift
  if "$@"; then passed=$((passed + 1)); else echo "FAIL: $name"; failed=$((failed + 1)); fi
}
WEED="${SHARDFEED_WEED:-}"
if [ ! -x "$WEED" ]; then
  if [ "${SHARDFEED_REQUIRE_TF:-}" = 1 ] || [ "${CI:-}" = true ]; then
    echo "FAIL: SeaweedFS (SHARDFEED_WEED) is required in CI"; exit 1
  fi
  echo "SKIP: no weed binary (SHARDFEED_WEED)"; exit 0
fi
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port() { while :; do p=$(free_port); [ $((p + 10000)) -lt 65536 ] && ! (echo > /dev/tcp/127.0.0.1/$((p + 10000))) 2>/dev/null && { echo "$p"; return; }; done; }
KEY=AKIDCLITEST SECRET='cli/s3cr3t+value'
mkdir -p "$TMP/weed"
echo "{\"identities\":[{\"name\":\"t\",\"credentials\":[{\"accessKey\":\"$KEY\",\"secretKey\":\"$SECRET\"}],\"actions\":[\"Admin\",\"Read\",\"Write\",\"List\"]}]}" >"$TMP/weed/s3.json"
S3=$(port)
"$WEED" mini -dir="$TMP/weed" -ip=127.0.0.1 -ip.bind=127.0.0.1 -s3.port="$S3" -s3.config="$TMP/weed/s3.json" \
  -bucket=data -master.port="$(port)" -volume.port="$(port)" -filer.port="$(port)" -admin.port="$(port)" \
  -admin.ui=false -webdav=false -s3.port.iceberg=0 -s3.port.lance=0 >"$TMP/weed.log" 2>&1 &
WEED_PID=$!
trap 'kill $WEED_PID 2>/dev/null; wait $WEED_PID 2>/dev/null' EXIT
for _ in $(seq 1 300); do (echo > "/dev/tcp/127.0.0.1/$S3") 2>/dev/null && break; sleep 0.2; done
export AWS_ENDPOINT_URL="http://127.0.0.1:$S3" AWS_ACCESS_KEY_ID="$KEY" AWS_SECRET_ACCESS_KEY="$SECRET"
export AWS_REGION=us-east-1 AWS_EC2_METADATA_DISABLED=true HOME="$TMP"
put() {  # put LOCAL_FILE KEY
  local sha; sha=$(sha256sum "$1" | cut -d' ' -f1)
  curl -sf --max-time 60 --aws-sigv4 "aws:amz:us-east-1:s3" --user "$KEY:$SECRET" \
    -H "x-amz-content-sha256: $sha" -T "$1" "$AWS_ENDPOINT_URL/data/$2" >/dev/null
}

"$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/ds" --shard-size 200KB --quiet
for f in "$TMP"/ds/*.tfrecord; do check "upload $(basename "$f")" put "$f" "ds/$(basename "$f")"; done

check "index --manifest into the bucket" "$SF" index --manifest s3://data/ds/
check "the manifest is in the bucket" curl -sf --max-time 60 --aws-sigv4 "aws:amz:us-east-1:s3" \
  --user "$KEY:$SECRET" -H "x-amz-content-sha256: $(printf '' | sha256sum | cut -d' ' -f1)" \
  -o "$TMP/manifest.json" "$AWS_ENDPOINT_URL/data/ds/manifest.json"
check "the manifest lists the shards" grep -q '"file": *"train-' "$TMP/manifest.json"

"$SF" check s3://data/ds/ >"$TMP/check.out" 2>&1
check "check s3:// exits 0" test $? -eq 0
check "check s3:// finds no problem" grep -q "OK: no problems found" "$TMP/check.out"

# The same shards indexed on disk the same way (index --manifest infers the
# schema: the fingerprints decode by it).
mkdir -p "$TMP/plain" && cp "$TMP"/ds/*.tfrecord "$TMP/plain/" && "$SF" index --manifest "$TMP/plain" >/dev/null
check "the manifests agree" cmp -s <(grep -v '"source"' "$TMP/plain/manifest.json") <(grep -v '"source"' "$TMP/manifest.json")
local_fp="$("$SF" cat --fingerprint "$TMP/plain" 2>/dev/null)"
remote_fp="$("$SF" cat --fingerprint s3://data/ds/ 2>/dev/null)"
check "cat --fingerprint: bucket = disk" test -n "$local_fp" -a "$local_fp" = "$remote_fp"
[ "$local_fp" = "$remote_fp" ] || echo "disk: $local_fp; bucket: $remote_fp"
local_b="$("$SF" bench "$TMP/plain" --epochs 1 --fingerprint --seed 3 --batch-size 32 2>/dev/null | grep -o 'fingerprint=[0-9a-f]*')"
remote_b="$("$SF" bench s3://data/ds/ --epochs 1 --fingerprint --seed 3 --batch-size 32 2>/dev/null | grep -o 'fingerprint=[0-9a-f]*')"
check "bench --fingerprint: bucket = disk" test -n "$local_b" -a "$local_b" = "$remote_b"
# bench --json reports the requests of a remote run (a local run starts no HTTP client).
check "bench --json: remote_requests for a bucket" bash -c "'$SF' bench --json --epochs 1 s3://data/ds/ 2>/dev/null | grep -q '\"remote_requests\":[1-9]'"
check "bench --json: no remote_requests on disk" bash -c "! '$SF' bench --json --epochs 1 '$TMP/plain' 2>/dev/null | grep -q remote_requests"

"$SF" convert tfrecord --input s3://data/ds/ --output "$TMP/reconv" --num-shards 2 --quiet
check "convert tfrecord --input s3://: the same records" test "$("$SF" cat --fingerprint "$TMP/reconv" 2>/dev/null | grep -o 'records=[0-9]*')" = "$(grep -o 'records=[0-9]*' <<<"$local_fp")"

AWS_SECRET_ACCESS_KEY='wrong/secret' "$SF" check s3://data/ds/ >"$TMP/denied.out" 2>&1
check "wrong secret exits 2" test $? -eq 2
check "wrong secret says PERMISSION_DENIED" grep -q "PERMISSION_DENIED\|SignatureDoesNotMatch" "$TMP/denied.out"
AWS_SECRET_ACCESS_KEY='wrong/secret' "$SF" bench --json s3://data/ds/ >"$TMP/denied.json" 2>&1
check "--json error names the reason" grep -q "SignatureDoesNotMatch" "$TMP/denied.json"
check "no secret in any output" bash -c "! grep -q -e 'wrong/secret' -e '$SECRET' '$TMP'/*.out '$TMP'/*.json"
"$SF" cat --count --no-sign s3://data/ds/ >"$TMP/anon.out" 2>&1
check "--no-sign on a private bucket is refused" test $? -eq 2

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
