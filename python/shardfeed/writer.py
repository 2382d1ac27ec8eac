"""Writing shards from Python: any records, the same shards as `shardfeed convert`.

    import numpy as np, shardfeed
    with shardfeed.Writer("out/", prefix="train", shard_size="100MB") as w:
        for jpeg, label, tokens in my_records():
            w.write({"image": jpeg, "label": label, "tokens": np.asarray(tokens, np.int64)})
    # out/train-00000-of-00003.tfrecord (+ .index) ... and out/manifest.json

Values: bytes or str (a bytes feature), int or bool (int64), float (a
float32 value, as tf.train.FloatList stores it), a list of those, a numpy
array or scalar, or None (the feature is absent from that record). Numpy:
uint8 arrays as raw bytes with their dtype and shape (as the converters store
CIFAR's images); other integer arrays as int64 lists and float32/float16
arrays as float lists, with dtype and shape; float64 arrays and scalars
exactly, as raw little-endian doubles in one bytes value (TFRecord has no
double list) with dtype "float64" and their shape in the manifest: the Loader
delivers them as float64, bit for bit. Refused with a message naming the
feature: an integer outside int64 (also uint64 values >= 2**63) and a Python
float that float32 cannot hold at all (1e300, 1e-300: give a numpy float64).
The schema is inferred from the records (a feature whose length varies
becomes variable-length: the Loader delivers NAME + NAME/offsets) or
declared: `schema={"image": "uint8[3,32,32]", "label": "int64", "tokens":
"int64[]", "score": "float64", "name": "bytes"}`, and then every record is
checked against it.

Shards are size-bounded (`shard_size`, as `convert`) and written under hidden
temporary names; `close()` (the end of the `with` block) renames them and
writes the manifest last. An exception inside the block removes them: nothing
that looks complete is left. Records go out in the order given, or shuffled
within a window of `shuffle_window` records (seeded by `seed`). The encoding
runs in C++ and the GIL is released while records are checksummed and written.

A bucket as the output (`Writer("s3://bucket/ds/")`, or gs://): the shards
are written into a staging folder under $TMPDIR and uploaded by close(),
the manifest last, so the dataset is complete exactly when its manifest
exists; a failed upload raises, leaves no manifest and removes what it
uploaded (credentials and endpoint as for reading: AWS_* variables,
~/.aws). Tasks of a distributed job write to a shared folder instead, and
`merge(OUTPUT, upload_to="s3://...")` uploads the merged dataset.

Distributed (Spark, Ray, Beam, Slurm): give each task `task_index` and
`task_count`; each writes `OUT/_parts/task-I-of-N/`, and one
`shardfeed.merge(OUT)` (or `shardfeed merge OUT`) verifies every part and
makes one dataset, shards numbered in task order. A task that runs again
replaces only its own part.
"""

import json
import os
import re

from . import _args, _shardfeed

__all__ = ["Writer", "write_shards", "merge", "parse_size"]

_UNITS = {"": 1, "b": 1, "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9,
          "kib": 1024, "mib": 1024 ** 2, "gib": 1024 ** 3}


def parse_size(size):
    """100_000_000, "100MB", "1.5GB", "64KiB" -> bytes."""
    if isinstance(size, (int, float)):
        value = float(size)
    else:
        m = re.fullmatch(r"\s*([0-9.]+(?:[eE][0-9]+)?)\s*([A-Za-z]*)\s*", str(size))
        if not m or m.group(2).lower() not in _UNITS:
            raise _shardfeed.InvalidArgumentError(f"bad size {size!r} (e.g. 100MB, 1GiB)")
        value = float(m.group(1)) * _UNITS[m.group(2).lower()]
    if not value > 0 or value != value or value == float("inf"):
        raise _shardfeed.InvalidArgumentError(f"bad size {size!r}")
    return int(value)


_KINDS = {"bytes": "bytes", "str": "bytes", "int64": "int64", "int": "int64", "float": "float",
          "float32": "float", "float64": "bytes", "int32": "int64", "uint8": "bytes"}


def _schema_entries(schema):
    """{"name": "int64[4]" | "uint8[3,32,32]" | "bytes" | "float[]"} -> tuples for C++."""
    entries = []
    for name, spec in (schema or {}).items():
        m = re.fullmatch(r"\s*(\w+)\s*(?:\[([0-9,\s]*)\])?\s*", str(spec))
        if not m or m.group(1) not in _KINDS:
            raise _shardfeed.InvalidArgumentError(
                f"schema {name!r}: {spec!r} is not TYPE or TYPE[SHAPE] (bytes, int64, float, "
                f"float32, float64, uint8[...]; TYPE[] for a variable length)")
        dtype, dims = m.group(1), m.group(2)
        shape = [int(d) for d in dims.split(",") if d.strip()] if dims else []
        kind = _KINDS[dtype]
        if dtype == "uint8":
            if not shape:
                raise _shardfeed.InvalidArgumentError(f"schema {name!r}: uint8 needs a shape")
            entries.append((name, "bytes", 1, "uint8", shape))
            continue
        if dtype == "float64":  # raw doubles in one bytes value: exact
            entries.append((name, "bytes", 1, "float64", [-1] if dims is not None and not shape
                            else shape))
            continue
        if dims is None:
            length = 1
        elif not shape:
            length = 0  # "int64[]": variable length
        else:
            length = 1
            for d in shape:
                length *= d
        recorded = dtype if dtype in ("float32", "float64", "int32", "int64") and shape else ""
        entries.append((name, kind, length, recorded, shape if len(shape) > 1 or recorded else []))
    return entries


class Writer:
    """Writes records (dicts) into shards, an index per shard and a manifest.

    output: the dataset folder (created if missing), or an s3:// or gs://
        prefix (staged locally, uploaded by close()).
    prefix: shard names PREFIX-NNNNN-of-NNNNN.tfrecord; split: the manifest's
        split name (default: the prefix).
    shard_size: target bytes per shard, e.g. "100MB" (a shard exceeds it only
        by a single record larger than the target).
    schema: None (inferred) or {name: "bytes" | "int64" | "float" | "int64[4]"
        | "float[]" | "uint8[3,32,32]"}.
    compression: "none", "zlib" or "gzip".
    shuffle_window, seed: shuffle within a window of that many records (seed:
        any integer, modulo 2**64; default 0, as everywhere).
    task_index, task_count: one task of a distributed job (see merge()).
    overwrite: replace a dataset shardfeed wrote in `output`.
    """

    def __init__(self, output, *, prefix="train", split=None, shard_size="100MB", schema=None,
                 compression="none", compression_level=-1, shuffle_window=0, seed=0,
                 task_index=None, task_count=None, overwrite=False):
        if (task_index is None) != (task_count is None):
            raise _shardfeed.InvalidArgumentError("give both task_index and task_count")
        a, w = _args, "shardfeed.Writer"
        if task_count is not None:
            task_count = a.whole(w, "task_count", task_count, 1, 99_999)
            task_index = a.whole(w, "task_index", task_index, 0, task_count - 1)
        self.output = os.fspath(output)
        self._impl = _shardfeed.Writer(
            self.output, prefix, split or prefix, parse_size(shard_size), compression,
            a.whole(w, "compression_level", compression_level, -1, 9),
            a.flag(w, "overwrite", overwrite),
            a.whole(w, "shuffle_window", shuffle_window, 0, 1 << 40), a.seed(w, seed),
            task_index or 0, task_count or 0, _schema_entries(schema))
        self.summary = None

    def write(self, record):
        """Adds one record: a dict of feature name -> value."""
        if self._impl is None:
            raise _shardfeed.Error("FAILED_PRECONDITION: the writer is closed")
        if not isinstance(record, dict):
            raise _shardfeed.InvalidArgumentError(
                f"shardfeed.Writer.write: a record is a dict of feature name -> value, not "
                f"{type(record).__name__}")
        self._impl.write(record)

    def write_many(self, records):
        for record in records:
            self.write(record)

    @property
    def records(self):
        return self._impl.records if self._impl is not None else self.summary["records"]

    def close(self):
        """Finishes the shards, renames them, writes the manifest (or task part).

        Returns the summary (records, bytes, shards, shard_files), as
        `shardfeed convert --json` prints it."""
        if self._impl is None:
            return self.summary
        impl, self._impl = self._impl, None
        self.summary = json.loads(impl.close())
        return self.summary

    def abort(self):
        """Stops without finishing: the temporaries are removed."""
        if self._impl is not None:
            self._impl.abort()
            self._impl = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def __del__(self):
        try:
            self.abort()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def write_shards(records, output, **options):
    """Writes an iterable of dicts with a Writer(output, **options); returns its summary."""
    with Writer(output, **options) as w:
        for record in records:
            w.write(record)
    return w.summary


def merge(output, *, threads=0, upload_to=None, overwrite=False):
    """`shardfeed merge OUTPUT`: one dataset from the tasks' parts in OUTPUT/_parts.

    Verifies every part first (all tasks finished, same run, sizes, CRC32C,
    record counts); any problem raises shardfeed.DataLossError naming the
    task, and nothing changes. Returns the summary of the merged dataset.

    upload_to: an s3:// or gs:// prefix: the verified dataset is uploaded
    there (manifest last; `shardfeed merge OUTPUT --output URL`) and OUTPUT
    stays as it is; overwrite: replace a dataset shardfeed wrote there."""
    return json.loads(_shardfeed.merge(os.fspath(output),
                                       _args.whole("merge", "threads", threads, 0, 1024),
                                       upload_to or "", _args.flag("merge", "overwrite", overwrite)))
