"""The venv side of bench/remote_bench.py (boto3, MosaicML Streaming, DALI):
each subcommand runs in its own process (DALI and TensorFlow must not share
one; every reader is timed as a whole process from outside) and prints one
JSON line.

  upload DIR s3://BUCKET/PREFIX/   every file of DIR (boto3, one PUT each)
  mds TFRECORD_SHARDS... --out DIR [--size-limit BYTES]
      writes the records of the shards, in order and as they are (the
      serialized Examples), as MosaicML MDS shards (one 'record' bytes column)
  streaming s3://BUCKET/PREFIX/ LOCAL_CACHE [--seed N]
      one shuffled epoch of StreamingDataset (its own download threads and
      local cache); records and record bytes read
  dali s3://... shards --index LOCAL_INDEX... [--threads N]
      one shuffled epoch of DALI's TFRecord reader (CPU pipeline,
      device_id=None) over s3:// paths, our .index files as its index

Environment: AWS_ENDPOINT_URL (boto3, DALI), S3_ENDPOINT_URL (Streaming),
AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_REGION.
"""
import argparse
import json
import os
import struct
import sys
import time


def split_s3(url):
    rest = url[len("s3://"):]
    bucket, _, prefix = rest.partition("/")
    return bucket, prefix


def s3_client():
    import boto3
    from botocore.config import Config
    return boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"],
                        config=Config(s3={"addressing_style": "path"}))


def upload(a):
    bucket, prefix = split_s3(a.url)
    s3, n, size = s3_client(), 0, 0
    for name in sorted(os.listdir(a.dir)):
        path = os.path.join(a.dir, name)
        if os.path.isfile(path):
            s3.upload_file(path, bucket, prefix + name)
            n, size = n + 1, size + os.path.getsize(path)
    return {"files": n, "bytes": size}


def records_of(path):
    """The records of one uncompressed TFRecord shard (framing not checked:
    `shardfeed check` vouches for these files)."""
    with open(path, "rb") as f:
        data = f.read()
    at = 0
    while at < len(data):
        (length,) = struct.unpack_from("<Q", data, at)
        yield data[at + 12:at + 12 + length]
        at += 16 + length


def mds(a):
    from streaming import MDSWriter
    n = size = 0
    with MDSWriter(out=a.out, columns={"record": "bytes"}, size_limit=a.size_limit) as w:
        for shard in a.shards:
            for r in records_of(shard):
                w.write({"record": r})
                n, size = n + 1, size + len(r)
    return {"records": n, "record_bytes": size}


def streaming(a):
    from streaming import StreamingDataset
    t0 = time.perf_counter()
    ds = StreamingDataset(remote=a.url, local=a.local, shuffle=True, shuffle_seed=a.seed,
                          batch_size=256)
    n = size = 0
    for sample in ds:
        n, size = n + 1, size + len(sample["record"])
    return {"records": n, "record_bytes": size, "seconds": time.perf_counter() - t0}


def dali(a):
    from nvidia.dali import pipeline_def, fn
    import nvidia.dali.tfrecord as tfrec
    import math

    @pipeline_def(batch_size=256, num_threads=a.threads, device_id=None, seed=1)
    def pipe():
        r = fn.readers.tfrecord(path=a.shards, index_path=a.index,
                                features={"image": tfrec.FixedLenFeature((), tfrec.string, ""),
                                          "label": tfrec.FixedLenFeature([1], tfrec.int64, -1)},
                                random_shuffle=True, initial_fill=10000, name="Reader")
        return r["image"], r["label"]

    t0 = time.perf_counter()
    p = pipe()
    p.build()
    n = p.epoch_size("Reader")
    size = 0
    for _ in range(math.ceil(n / 256)):
        images, _ = p.run()
        size += sum(images.at(i).nbytes for i in range(len(images)))
    return {"records": n, "image_bytes": size, "seconds": time.perf_counter() - t0}


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    u = sub.add_parser("upload")
    u.add_argument("dir")
    u.add_argument("url")
    m = sub.add_parser("mds")
    m.add_argument("shards", nargs="+")
    m.add_argument("--out", required=True)
    m.add_argument("--size-limit", type=int, default=1 << 26)
    s = sub.add_parser("streaming")
    s.add_argument("url")
    s.add_argument("local")
    s.add_argument("--seed", type=int, default=1)
    d = sub.add_parser("dali")
    d.add_argument("shards", nargs="+")
    d.add_argument("--index", nargs="+", required=True)
    d.add_argument("--threads", type=int, default=2)
    a = p.parse_args()
    print(json.dumps({"upload": upload, "mds": mds, "streaming": streaming, "dali": dali}[a.cmd](a)))


if __name__ == "__main__":
    sys.exit(main())
