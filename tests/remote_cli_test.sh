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
source "$ROOT/tests/seaweed_mini.sh"
KEY=AKIDCLITEST SECRET='cli/s3cr3t+value'
start_seaweed "$TMP/weed" "$KEY" "$SECRET"
trap 'kill $WEED_PID 2>/dev/null; wait $WEED_PID 2>/dev/null' EXIT
export HOME="$TMP"
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

# Remote shards are fetched in extents into a bounded cache: quasi shuffle
# with 64 KB extents reads what the disk reads, far below one request per
# record; a limit too small is refused up front with the one that works.
qflags=(--epochs 1 --fingerprint --seed 3 --batch-size 32 --quasi-shuffle --shuffle-buffer 200 --extent-bytes 65536)
local_q="$("$SF" bench "$TMP/plain" "${qflags[@]}" 2>/dev/null | grep -o 'fingerprint=[0-9a-f]*')"
"$SF" bench s3://data/ds/ "${qflags[@]}" --cache-dir "$TMP/extents" --cache-limit 4000000 >"$TMP/quasi.out" 2>&1
check "bench --quasi-shuffle by extents: bucket = disk" test -n "$local_q" -a "$local_q" = "$(grep -o 'fingerprint=[0-9a-f]*' "$TMP/quasi.out")"
check "bench reports the extents fetched" grep -q "^extents .* fetched" "$TMP/quasi.out"
"$SF" bench --json s3://data/ds/ --epochs 1 --quasi-shuffle --extent-bytes 65536 --cache-dir "$TMP/extents2" >"$TMP/quasi.json" 2>"$TMP/quasi.err"
check "requests per record far below 1" python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if 0 < d["requests_per_record"] < 0.25 and d["extent_requests"] * 10 < d["records"] else 1)' "$TMP/quasi.json"
"$SF" bench s3://data/ds/ --epochs 1 --quasi-shuffle --cache-dir "$TMP/extents3" --cache-limit 1000 >"$TMP/small.out" 2>&1
check "a cache limit too small exits 2" test $? -eq 2
check "and says which limit works" grep -q "cache_limit >= [0-9]" "$TMP/small.out"

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
