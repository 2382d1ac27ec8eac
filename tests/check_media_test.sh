#!/usr/bin/env bash
# End-to-end tests of `shardfeed check` on encoded images and audio: "can
# the Loader's decode stage read every image?" A GIF in an image-folder
# dataset, a JPEG cut short (also in a dataset without a manifest), a JPEG
# whose body is corrupt (only a whole decode sees it: --decode, the default
# for image-folder datasets), a WAV cut short: each reported with file,
# offset and source file, in text and --json. `convert image-folder` skips a
# JPEG cut short after its header with a warning. No false alarm on the
# repository's real photos, CIFAR, MNIST and (with SHARDFEED_DATASETS) the
# shared real datasets.
set -u
source "${TEST_SRCDIR:-.}/${TEST_WORKSPACE:-shardfeed}/tests/harness.sh" check_media

ANTS="$FX/images/hymenoptera/train/ants"
BEES="$FX/images/hymenoptera/train/bees"
JPG1="$ANTS/$(ls "$ANTS" | head -1)"
JPG2="$BEES/$(ls "$BEES" | head -1)"
size2=$(stat -L -c %s "$JPG2")

# An image folder with a GIF (a real one is 43 bytes of header + data) and
# a JPEG whose body is corrupt: cut at half and closed with an end-of-image
# marker, so its header and its end look right.
mkdir -p "$TMP/imgs/ants" "$TMP/imgs/bees"
cp "$JPG1" "$TMP/imgs/ants/good.jpg"
printf 'GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;' \
  >"$TMP/imgs/ants/anim.gif"
{ head -c $((size2 / 2)) "$JPG2"; printf '\xff\xd9'; } >"$TMP/imgs/bees/corrupt.jpg"
"$SF" convert image-folder --input "$TMP/imgs" --output "$TMP/ds" --quiet
check "dataset with a GIF and a corrupt JPEG exits 1" test "$(exit_code "$SF" check "$TMP/ds")" -eq 1
check "the GIF is named with its source file" \
  grep -Eq "^$TMP/ds/train-00000-of-00001.tfrecord:[0-9]+: feature 'image/encoded': a GIF image: the decode stage reads JPEG and PNG only \(source file: anim.gif\)$" "$TMP/last.out"
check "the corrupt JPEG is found by the default whole decode" \
  grep -Eq "^$TMP/ds/train-00000-of-00001.tfrecord:[0-9]+: feature 'image/encoded': JPEG: .*\(source file: corrupt.jpg\)$" "$TMP/last.out"
check "the summary says do not train" out_has "PROBLEMS FOUND"
# Header checks only: the corrupt body passes, the GIF does not.
check "--no-decode still refuses the GIF" test "$(exit_code "$SF" check --no-decode "$TMP/ds")" -eq 1
check "--no-decode does not decode the body" test "$(grep -c "corrupt.jpg" "$TMP/last.out")" -eq 0
# --json: the same problems, with the source file as a field.
"$SF" check --json "$TMP/ds" >"$TMP/report.json"
check "--json names file, offset and source" python3 -c "
import json, sys
r = json.load(open('$TMP/report.json'))
srcs = sorted(p['source'] for p in r['problems'])
assert not r['ok'] and srcs == ['anim.gif', 'corrupt.jpg'], r['problems']
assert all(p['offset'] >= 0 and p['file'].endswith('.tfrecord') for p in r['problems'])
"
check "--decode and --no-decode together are a usage error" \
  test "$(exit_code "$SF" check --decode --no-decode "$TMP/ds")" -eq 2
check "--raw does not look at images" test "$(exit_code "$SF" check --raw "$TMP/ds")" -eq 0

# A JPEG cut short after its header: convert image-folder skips it with a
# warning (as a broken header), --strict refuses it.
mkdir -p "$TMP/cut/ants" "$TMP/cut/bees"
cp "$JPG1" "$TMP/cut/ants/good.jpg"
head -c $((size2 / 2)) "$JPG2" >"$TMP/cut/bees/cut.jpg"
check "convert skips a JPEG cut short" test "$(exit_code "$SF" convert image-folder --input "$TMP/cut" --output "$TMP/cutds")" -eq 0
check "convert warns, naming it" err_has "warning: skipped $TMP/cut/bees/cut.jpg: JPEG: truncated (no end-of-image marker)"
check "convert counts it skipped" err_has "converted 1 record (.*) into 1 shard .*skipped 1 input file"
check "convert --strict refuses it" test "$(exit_code "$SF" convert image-folder --input "$TMP/cut" --output "$TMP/cutstrict" --strict)" -eq 1
check "convert --strict names it" err_has "cut.jpg: JPEG: truncated (no end-of-image marker) (--strict)"
# A PNG cut short, too (the decode fixtures' PNG).
mkdir -p "$TMP/png/a"
cp "$FX/decode/rgba.png" "$TMP/png/a/good.png"
head -c $(($(stat -L -c %s "$FX/decode/rgba.png") - 20)) "$FX/decode/rgba.png" >"$TMP/png/a/cut.png"
"$SF" convert image-folder --input "$TMP/png" --output "$TMP/pngds" 2>"$TMP/last.err"
check "convert skips a PNG cut short" err_has "skipped $TMP/png/a/cut.png: PNG: truncated"

# Without a manifest (convert files: the schema is inferred): values with a
# JPEG/PNG/WAV signature must decode; a GIF among JPEGs is a problem.
mkdir -p "$TMP/files"
cp "$JPG1" "$TMP/files/a.jpg"; cp "$JPG2" "$TMP/files/b.jpg"
head -c $((size2 / 2)) "$JPG2" >"$TMP/files/c_cut.jpg"
cp "$TMP/imgs/ants/anim.gif" "$TMP/files/d.gif"
"$SF" convert files --input "$TMP/files/*" --output "$TMP/filesds" --no-shuffle --quiet
rm "$TMP/filesds/manifest.json"
check "files: a JPEG cut short exits 1" test "$(exit_code "$SF" check "$TMP/filesds")" -eq 1
check "files: the cut JPEG and its source file" \
  grep -Eq "feature 'data': JPEG: truncated \(no end-of-image marker\) \(source file: $TMP/files/c_cut.jpg\)$" "$TMP/last.out"
check "files: a GIF among JPEGs is a problem" grep -q "feature 'data': a GIF image.*d.gif" "$TMP/last.out"
# ... but a feature of GIFs only, or of text, is not an image feature.
mkdir -p "$TMP/gifs"; cp "$TMP/imgs/ants/anim.gif" "$TMP/gifs/x.gif"; printf 'hello\n' >"$TMP/gifs/y.txt"
"$SF" convert files --input "$TMP/gifs/*" --output "$TMP/gifds" --quiet
check "files: GIFs and text alone are no problem" test "$(exit_code "$SF" check "$TMP/gifds")" -eq 0

# WAV audio: a header that says more samples than the file holds.
wav() {  # wav FILE DATA_BYTES_DECLARED DATA_BYTES_WRITTEN (16-bit mono 16 kHz)
  local le4; le4() { printf "\\x$(printf %02x $(($1 & 255)))\\x$(printf %02x $((($1 >> 8) & 255)))\\x$(printf %02x $((($1 >> 16) & 255)))\\x$(printf %02x $((($1 >> 24) & 255)))"; }
  { printf 'RIFF'; le4 $((36 + $2)); printf 'WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x80\x3e\x00\x00\x00\x7d\x00\x00\x02\x00\x10\x00data'
    le4 "$2"; head -c "$3" /dev/zero; } >"$1"
}
mkdir -p "$TMP/wav"
wav "$TMP/wav/good.wav" 3200 3200
wav "$TMP/wav/cut.wav" 3200 1000
"$SF" convert files --input "$TMP/wav/*.wav" --output "$TMP/wavds" --quiet
check "a WAV cut short exits 1" test "$(exit_code "$SF" check "$TMP/wavds")" -eq 1
check "a WAV cut short is named" grep -Eq "feature 'data': WAV: .*\(source file: $TMP/wav/cut.wav\)$" "$TMP/last.out"
check "the good WAV is not" test "$(grep -c "good.wav" "$TMP/last.out")" -eq 0

# No false alarms: the repository's real photos (JPEG, PNG; with the default
# whole decode), CIFAR and MNIST.
for d in "$FX"/images/*; do
  rm -rf "$TMP/real"
  "$SF" convert image-folder --input "$d" --output "$TMP/real" --quiet
  check "real photos $(basename "$d") are clean" test "$(exit_code "$SF" check "$TMP/real")" -eq 0
done
"$SF" convert files --input "$FX/decode/*.[jp][pn]g" --output "$TMP/fixtures" --quiet
check "decode fixtures (CMYK, progressive, 16-bit, palette) are clean" test "$(exit_code "$SF" check --decode "$TMP/fixtures")" -eq 0
"$SF" convert cifar10 --input "$FX/cifar10-bin" --output "$TMP/c10" --quiet
check "CIFAR-10 is clean" test "$(exit_code "$SF" check "$TMP/c10")" -eq 0
"$SF" convert mnist --input "$FX/mnist" --output "$TMP/mnist" --quiet
check "MNIST is clean" test "$(exit_code "$SF" check "$TMP/mnist")" -eq 0
if [ -n "${SHARDFEED_DATASETS:-}" ] && [ -d "$SHARDFEED_DATASETS/images" ]; then
  for d in "$SHARDFEED_DATASETS"/images/*; do
    rm -rf "$TMP/shared"
    "$SF" convert image-folder --input "$d" --output "$TMP/shared" --quiet
    rc=$(exit_code "$SF" check "$TMP/shared")
    if [ "$(basename "$d")" = hymenoptera ]; then  # holds one real GIF, imageNotFound.gif
      check "shared hymenoptera: only its GIF" test "$rc" -eq 1 -a "$(grep -c ': feature ' "$TMP/last.out")" -eq 1
      check "shared hymenoptera: the GIF named" grep -q "(source file: imageNotFound.gif)" "$TMP/last.out"
    else
      check "shared real photos $(basename "$d") are clean" test "$rc" -eq 0
    fi
  done
else
  echo "SKIPPED the shared real datasets: SHARDFEED_DATASETS is not set"
fi

finish
