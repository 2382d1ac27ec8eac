#!/usr/bin/env bash
# Writing datasets into a bucket (SeaweedFS on loopback, strict SigV4):
# `convert --output s3://...` gives the same bytes as a local convert (every
# object compared with curl, an independent client) and reads back through
# check and the Loader (bench --fingerprint); an existing dataset is refused
# without --overwrite and replaced with it (stale objects removed); a large
# shard goes up in 5 MiB parts (a multipart ETag "-N"); a failure midway
# (tests/fault_proxy.py answers 503 to every request for part 2, beyond the
# retry budget; or to every PUT of one shard) leaves no manifest, no objects,
# no open multipart upload and no staging folder, and names the URL and the
# status; `merge DIR --output s3://...` uploads the tasks' dataset; rclone
# serve s3 takes the same uploads; no secret in any output.
set -u
ROOT="${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-shardfeed}"
SF="$ROOT/cli/shardfeed"
FX="$ROOT/testdata"
PROXY="$ROOT/tests/fault_proxy.py"
TMP="$(mktemp -d "${TEST_TMPDIR:-/tmp}/bucket_write.XXXXXX")"
passed=0
failed=0
check() {
  local name="$1"; shift
  if "$@"; then passed=$((passed + 1)); else echo "FAIL: $name"; failed=$((failed + 1)); return 1; fi
}
source "$ROOT/tests/seaweed_mini.sh"
KEY=AKIDUPLOADTEST SECRET='upload/s3cr3t+value'
start_seaweed "$TMP/weed" "$KEY" "$SECRET"
PROXY_PID=
trap 'kill $WEED_PID $PROXY_PID 2>/dev/null; wait $WEED_PID $PROXY_PID 2>/dev/null' EXIT
mkdir -p "$TMP/staging"
WEED_URL="http://127.0.0.1:$S3"
export HOME="$TMP" TMPDIR="$TMP/staging"
export SHARDFEED_HTTP_ATTEMPTS=3
EMPTY_SHA=$(printf '' | sha256sum | cut -d' ' -f1)
s3get() {  # s3get KEY_AND_QUERY OUT: straight to SeaweedFS with curl's signer
  curl -sf --max-time 60 --aws-sigv4 "aws:amz:us-east-1:s3" --user "$KEY:$SECRET" \
    -H "x-amz-content-sha256: $EMPTY_SHA" -o "$2" "$WEED_URL/data/$1"
}
# The keys under prefix $1 ("c10/"); fails when the listing does.
listing() {
  s3get "?list-type=2&prefix=${1%/}%2F" "$TMP/list.xml" || { echo "LISTING FAILED"; return 1; }
  grep -o '<Key>[^<]*</Key>' "$TMP/list.xml" | sed 's/<[^>]*>//g'
}
bucket_empty() { local l; l="$(listing "$1")" && [ -z "$l" ] || { echo "left: $l"; return 1; }; }
# Every file of local dataset $1 equals its object under prefix $2, and the
# prefix holds nothing else.
same_as_local() {
  local f n=0
  for f in "$1"/*; do
    s3get "$2/$(basename "$f")" "$TMP/obj" && cmp -s "$f" "$TMP/obj" || { echo "differs: $f"; return 1; }
    n=$((n + 1))
  done
  local keys; keys="$(listing "$2/")" || return 1
  [ "$(wc -l <<<"$keys")" -eq "$n" ] || { echo "the bucket holds other objects: $keys"; return 1; }
}
staging_empty() { [ -z "$(ls -A "$TMP/staging")" ] || { ls -la "$TMP/staging"; return 1; }; }

# 1. convert into the bucket = convert on disk, byte for byte; read back.
"$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/c10" --shard-size 200KB --seed 7 --quiet
"$SF" convert cifar10 --input "$FX/cifar10-bin" --output s3://data/c10/ --shard-size 200KB --seed 7 \
  --json >"$TMP/convert.json" 2>"$TMP/convert.err"
check "convert --output s3:// exits 0" test $? -eq 0
check "--json summary" grep -q '"ok":true' "$TMP/convert.json"
check "bucket = local convert (every object, manifest included)" same_as_local "$TMP/c10" c10
check "no staging folder left" staging_empty
"$SF" check s3://data/c10/ >"$TMP/check.out" 2>&1
check "check s3:// finds no problem" grep -q "OK: no problems found" "$TMP/check.out"
local_b="$("$SF" bench "$TMP/c10" --epochs 1 --fingerprint --seed 3 --batch-size 32 2>/dev/null | grep -o 'fingerprint=[0-9a-f]*')"
remote_b="$("$SF" bench s3://data/c10/ --epochs 1 --fingerprint --seed 3 --batch-size 32 2>/dev/null | grep -o 'fingerprint=[0-9a-f]*')"
check "Loader batches: bucket = disk" test -n "$local_b" -a "$local_b" = "$remote_b"

# 2. An existing dataset: refused, then replaced with --overwrite.
"$SF" convert cifar10 --input "$FX/cifar10-bin" --output s3://data/c10 --seed 7 --quiet 2>"$TMP/exists.out"
check "existing dataset refused (exit 2)" test $? -eq 2
check "the refusal says --overwrite" grep -q "already holds a dataset.*--overwrite" "$TMP/exists.out"
check "the refused run changed nothing" same_as_local "$TMP/c10" c10
"$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/c10b" --shard-size 600KB --seed 8 --quiet
"$SF" convert cifar10 --input "$FX/cifar10-bin" --output s3://data/c10 --shard-size 600KB --seed 8 \
  --overwrite --quiet
check "--overwrite replaces it, stale shards removed" same_as_local "$TMP/c10b" c10

# 3. A shard above the threshold goes up in 5 MiB parts.
mkdir -p "$TMP/blobs"
for i in $(seq 1 24); do head -c 500000 /dev/urandom >"$TMP/blobs/b$i.bin"; done
"$SF" convert files --input "$TMP/blobs/*.bin" --output "$TMP/big" --seed 1 --quiet
SHARDFEED_UPLOAD_THRESHOLD=1MiB SHARDFEED_UPLOAD_PART_SIZE=5MiB \
  "$SF" convert files --input "$TMP/blobs/*.bin" --output s3://data/big/ --seed 1 --quiet
check "multipart convert exits 0" test $? -eq 0
check "multipart: bucket = local" same_as_local "$TMP/big" big
shard=$(basename "$(ls "$TMP"/big/*.tfrecord | head -1)")
curl -sf --max-time 60 --aws-sigv4 "aws:amz:us-east-1:s3" --user "$KEY:$SECRET" \
  -H "x-amz-content-sha256: $EMPTY_SHA" -I "$WEED_URL/data/big/$shard" >"$TMP/head.txt"
check "the 12 MB shard was uploaded in 3 parts (ETag ...-3)" grep -qi '^etag: "[0-9a-f]*-3"' "$TMP/head.txt"
SHARDFEED_UPLOAD_PART_SIZE=1MiB "$SF" convert files --input "$TMP/blobs/*.bin" --output s3://data/x/ \
  --quiet 2>"$TMP/badpart.out"
check "a part size below S3's 5 MiB is refused" grep -q "SHARDFEED_UPLOAD_PART_SIZE=1MiB: between 5 MiB" "$TMP/badpart.out"

# 4. Failures midway: no manifest, nothing left behind.
start_proxy() {
  rm -f "$TMP/proxy.port"
  python3 "$PROXY" --upstream "127.0.0.1:$S3" --port-file "$TMP/proxy.port" --stats "$TMP/proxy.json" \
    --fail-matching "$1" >"$TMP/proxy.log" 2>&1 &
  PROXY_PID=$!
  for _ in $(seq 1 100); do [ -s "$TMP/proxy.port" ] && break; sleep 0.1; done
  PROXY_URL="http://127.0.0.1:$(cat "$TMP/proxy.port")"
}
stop_proxy() { kill "$PROXY_PID"; wait "$PROXY_PID" 2>/dev/null; PROXY_PID=; }
# The proxy failed exactly the retry budget (3 attempts of the one request)
# and passed others through before: the upload had really started.
failed_midway() {
  python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); print(s); sys.exit(not (s["slowdowns"] == 3 and s["requests"] > 4))' "$TMP/proxy.json"
}
no_open_uploads() { s3get "?uploads=" "$TMP/uploads.xml" && ! grep -q "<UploadId>" "$TMP/uploads.xml"; }

start_proxy "partNumber=2&"
AWS_ENDPOINT_URL="$PROXY_URL" SHARDFEED_UPLOAD_THRESHOLD=1MiB SHARDFEED_UPLOAD_PART_SIZE=5MiB \
  "$SF" convert files --input "$TMP/blobs/*.bin" --output s3://data/fail1/ --seed 1 \
  --json >"$TMP/fail1.json" 2>"$TMP/fail1.err"
code=$?
stop_proxy
check "a part that fails for good fails the run" test "$code" -ne 0
check "part 2 failed 3 times, after part 1 went up" failed_midway
check "the error names the object, the URL and HTTP 503" \
  grep -q "s3://data/fail1/train-00000-of-00001.tfrecord: http://127.0.0.1:[0-9]*/data/fail1/train-00000-of-00001.tfrecord?<redacted>: HTTP 503 SlowDown" "$TMP/fail1.json"
check "no upload id in the error" bash -c "! grep -qi 'uploadId=' '$TMP/fail1.json' '$TMP/fail1.err'"
check "no manifest, no object left" bucket_empty fail1/
check "the multipart upload was aborted" no_open_uploads
check "no staging folder left after the failure" staging_empty

# convert_via_proxy MATCH PREFIX NAME [FLAGS...]: cifar10 into s3://data/PREFIX
# through a proxy that answers 503 to every request line holding MATCH;
# stderr in $TMP/NAME.err, the exit status in $code.
convert_via_proxy() {
  start_proxy "$1"
  AWS_ENDPOINT_URL="$PROXY_URL" "$SF" convert cifar10 --input "$FX/cifar10-bin" --output "s3://data/$2" \
    "${@:4}" --quiet 2>"$TMP/$3.err"
  code=$?
  stop_proxy
}
convert_via_proxy "/train-00001-of-00003.tfrecord " fail2 fail2 --num-shards 3
check "a shard that fails for good fails the run" test "$code" -ne 0
check "that shard failed 3 times, after others went up" failed_midway
check "its error names the shard and the status" grep -q "fail2/train-00001-of-00003.tfrecord: .*HTTP 503" "$TMP/fail2.err" ||
  cat "$TMP/fail2.err"
check "no manifest, the other shards removed" bucket_empty fail2/
check "no staging folder left" staging_empty

# 4c. Interrupted (SIGTERM, as Ctrl-C) while the parts go up (every request
# delayed 400 ms): stops between parts, aborts, leaves nothing behind.
rm -f "$TMP/proxy.json"
python3 "$PROXY" --upstream "127.0.0.1:$S3" --port-file "$TMP/proxy.port.int" --stats "$TMP/proxy.json" \
  --latency-ms 400 >"$TMP/proxy.log" 2>&1 &
PROXY_PID=$!
for _ in $(seq 1 100); do [ -s "$TMP/proxy.port.int" ] && break; sleep 0.1; done
AWS_ENDPOINT_URL="http://127.0.0.1:$(cat "$TMP/proxy.port.int")" SHARDFEED_UPLOAD_THRESHOLD=1MiB \
  SHARDFEED_UPLOAD_PART_SIZE=5MiB "$SF" convert files --input "$TMP/blobs/*.bin" --output s3://data/int/ \
  --quiet 2>"$TMP/int.err" &
CPID=$!
answered() { python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["requests"] < 3)' "$TMP/proxy.json" 2>/dev/null; }
for _ in $(seq 1 300); do answered && break; sleep 0.1; done  # CreateMultipartUpload answered
kill -TERM "$CPID"
for _ in $(seq 1 300); do kill -0 "$CPID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$CPID" 2>/dev/null && { echo "convert did not stop"; kill -KILL "$CPID"; }
wait "$CPID"
code=$?
stop_proxy
check "interrupted upload: exit 2" test "$code" -eq 2
check "interrupted upload: says interrupted" grep -q "interrupted" "$TMP/int.err"
check "interrupted upload: no manifest, no object" bucket_empty int/
check "interrupted upload: the multipart upload was aborted" no_open_uploads
check "interrupted upload: no staging folder" staging_empty

# A manifest that cannot be written: the uploaded shards are taken away
# too (they were left, and the next run refused the prefix as holding files
# shardfeed did not write, even with --overwrite).
convert_via_proxy "PUT /data/fail3/manifest.json " fail3 fail3 --num-shards 2
check "a manifest that cannot be written fails the run" test "$code" -ne 0
check "its error names the manifest and the status" grep -q "fail3/manifest.json.*HTTP 503" "$TMP/fail3.err"
check "no manifest, the uploaded shards removed" bucket_empty fail3/
check "no staging folder left after the manifest failure" staging_empty

# A prefix whose listing fails (a key without the List permission, 503s
# beyond the retries) is refused: it was taken for empty, and the dataset
# there was overwritten without --overwrite.
convert_via_proxy "list-type=2" c10 nolist --seed 9
check "a prefix that cannot be listed is refused" test "$code" -ne 0
check "the refusal says why" grep -q "cannot tell whether it exists" "$TMP/nolist.err"
check "the dataset there is unchanged" same_as_local "$TMP/c10b" c10
check "no staging folder left after the refusal" staging_empty

# 5. merge: tasks' parts on disk, the dataset uploaded.
for t in 0 1; do
  "$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/parts" --shard-size 200KB --seed 7 \
    --task-index $t --task-count 2 --quiet
done
"$SF" merge "$TMP/parts" --output s3://data/merged/ --quiet
check "merge --output s3:// exits 0" test $? -eq 0
check "merged in the bucket = single-process convert" same_as_local "$TMP/c10" merged
check "the parts stay on disk" test -d "$TMP/parts/_parts"
"$SF" merge "$TMP/parts" --output s3://data/merged/ --quiet 2>"$TMP/merge2.err"
check "merge into an existing dataset is refused" test $? -eq 2

# 5b. copy --output s3://: one file (and its index), uploaded.
"$SF" copy "$TMP/c10" --output "$TMP/one.tfrecord" --index --compression gzip 2>/dev/null
"$SF" copy s3://data/merged/ --output s3://data/copies/one.tfrecord.gz --index --compression gzip 2>"$TMP/copy.err"
check "copy --output s3:// exits 0" test $? -eq 0
check "the copy = a local copy" bash -c "s3get() { curl -sf --aws-sigv4 aws:amz:us-east-1:s3 --user '$KEY:$SECRET' -H 'x-amz-content-sha256: $EMPTY_SHA' -o \"\$2\" '$WEED_URL/data/'\"\$1\"; }
  s3get copies/one.tfrecord.gz '$TMP/got' && cmp '$TMP/got' '$TMP/one.tfrecord' &&
  s3get copies/one.tfrecord.gz.index '$TMP/got.index' && cmp '$TMP/got.index' '$TMP/one.tfrecord.index'"
"$SF" copy s3://data/merged/ --output s3://data/copies/one.tfrecord.gz 2>"$TMP/copy2.err"
check "copy onto an existing object is refused (exit 2)" test $? -eq 2
check "no staging folder left after copy" staging_empty
# An existing object whose HEAD fails (503s beyond the retries; a key
# without Read) is refused: it was taken for absent and overwritten.
start_proxy "HEAD /data/copies/"
AWS_ENDPOINT_URL="$PROXY_URL" "$SF" copy "$TMP/c10" --output s3://data/copies/one.tfrecord.gz 2>"$TMP/copy3.err"
code=$?
stop_proxy
check "copy onto an object that cannot be checked is refused" test "$code" -ne 0
check "copy: the refusal says why" grep -q "cannot tell whether it exists" "$TMP/copy3.err"
check "copy: the object there is unchanged" bash -c "curl -sf --aws-sigv4 aws:amz:us-east-1:s3 --user '$KEY:$SECRET' -H 'x-amz-content-sha256: $EMPTY_SHA' -o '$TMP/got3' '$WEED_URL/data/copies/one.tfrecord.gz' && cmp '$TMP/got3' '$TMP/one.tfrecord'"

# 6. rclone serve s3 (another S3 implementation; buckets are folders, so
# the objects are compared as files): single PUTs and a multipart upload.
RCLONE="${SHARDFEED_RCLONE:-}"
if [ -x "$RCLONE" ]; then
  mkdir -p "$TMP/rc/data"
  RC=$(port)
  "$RCLONE" serve s3 --config=/dev/null --addr="127.0.0.1:$RC" --auth-key="$KEY,$SECRET" "$TMP/rc" \
    >"$TMP/rclone.log" 2>&1 &
  RC_PID=$!
  for _ in $(seq 1 150); do (echo > "/dev/tcp/127.0.0.1/$RC") 2>/dev/null && break; sleep 0.2; done
  AWS_ENDPOINT_URL="http://127.0.0.1:$RC" SHARDFEED_UPLOAD_THRESHOLD=1MiB SHARDFEED_UPLOAD_PART_SIZE=5MiB \
    "$SF" convert files --input "$TMP/blobs/*.bin" --output s3://data/big/ --seed 1 --quiet 2>"$TMP/rclone.err"
  check "rclone: multipart convert exits 0" test $? -eq 0
  AWS_ENDPOINT_URL="http://127.0.0.1:$RC" "$SF" convert cifar10 --input "$FX/cifar10-bin" \
    --output s3://data/c10/ --shard-size 200KB --seed 7 --quiet 2>>"$TMP/rclone.err"
  check "rclone: single-PUT convert exits 0" test $? -eq 0
  kill "$RC_PID"; wait "$RC_PID" 2>/dev/null
  check "rclone: the multipart shard = local" diff -r "$TMP/big" "$TMP/rc/data/big"
  check "rclone: the cifar10 dataset = local" diff -r "$TMP/c10" "$TMP/rc/data/c10"
elif [ "${SHARDFEED_REQUIRE_TF:-}" = 1 ] || [ "${CI:-}" = true ]; then
  check "rclone (SHARDFEED_RCLONE) is required in CI" false
else
  echo "SKIP: rclone part (no SHARDFEED_RCLONE)"
fi

check "no secret in any output" bash -c "! grep -rq -e '$SECRET' '$TMP'/*.out '$TMP'/*.err '$TMP'/*.json"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
