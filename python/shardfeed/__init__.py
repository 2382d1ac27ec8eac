"""shardfeed: TFRecord shards into training loops, from C++ threads, zero-copy.

    import shardfeed, torch
    for batch in shardfeed.Loader("cifar10/", split="train", batch_size=256,
                                  epochs=10, device=0):
        images = torch.from_dlpack(batch["image"])   # uint8 [256, 3, 32, 32]
        labels = torch.from_dlpack(batch["label"])   # int64 [256]

`Loader` iterates over batches: a `Batch` maps feature names to `Tensor`s
that any DLPack consumer takes without a copy (`torch.from_dlpack`,
`jax.dlpack.from_dlpack`, `numpy.from_dlpack`, and
`tf.experimental.dlpack.from_dlpack(t.__dlpack__())`).

Tensor lifetime: a batch lives in one slot of the loader's ring (`prefetch`
slots). The slot is reused only after the batch and every array made from
it are gone, so holding arrays is always safe. When you hold every slot
(e.g. `[np.from_dlpack(b["image"]) for b in loader]`), the ring grows by a
slot instead of waiting: memory then grows with what you keep, as it would
with copies. With `grow_ring=False`, `next()` raises `shardfeed.Error`
(FAILED_PRECONDITION) instead; a `for` loop's variable still holds the
previous batch while the next is fetched, so it counts as one held batch.

On a GPU (`device=N`), batches are in device memory; `__dlpack__(stream=S)`
makes stream S wait for the batch's copy (torch passes its current stream),
and with no stream the call waits for the copy itself.

Variable-length features (bytes such as JPEG files or names, and number
lists whose length varies, e.g. token ids) arrive ragged, as two tensors:
NAME, every row's values concatenated (uint8 for bytes, else int64 /
float32 / float64), and NAME/offsets (int64 [rows + 1]): row r is
NAME[offsets[r]:offsets[r + 1]]. `batch.ragged(NAME)` gives the rows as a
list (bytes, or numpy arrays), `batch.strings(NAME)` as Python str; a decode
spec ("int64,length=128,pad=0") pads them to a fixed shape instead.

`rank`/`world_size` default from the environment of torchrun (RANK,
WORLD_SIZE), Slurm (SLURM_PROCID, SLURM_NTASKS) or Open MPI
(OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE); each rank gets a disjoint
part of every epoch and all ranks the same number of batches.

`convert()` and `check()` run the same code as `shardfeed convert` and
`shardfeed check` and return the same report as their `--json` output.
"""

import json
import os
import warnings

from . import _args, _shardfeed
from ._shardfeed import DataLossError, Error, InvalidArgumentError, NotFoundError, Tensor
from .writer import Writer, merge, parse_size, write_shards  # noqa: F401 (writer.py)

__all__ = ["Loader", "Batch", "Tensor", "convert", "check", "rank_and_world_size",
           "Error", "DataLossError", "InvalidArgumentError", "NotFoundError"]

_ENV_PAIRS = (("RANK", "WORLD_SIZE"), ("SLURM_PROCID", "SLURM_NTASKS"),
              ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"))


def rank_and_world_size(environ=None):
    """(rank, world_size) from torchrun, Slurm or Open MPI variables; (0, 1) if none."""
    env = os.environ if environ is None else environ
    for rank_var, size_var in _ENV_PAIRS:
        if rank_var in env and size_var in env:
            try:
                rank, size = int(env[rank_var]), int(env[size_var])
            except ValueError as e:
                raise InvalidArgumentError(f"{rank_var}/{size_var} are not integers: {e}") from None
            return rank, size
    return 0, 1


def _spec_string(features):
    if features is None:
        return ""
    if isinstance(features, str):
        return features
    parts = []
    for name, kind in features.items():
        parts.append(f"{name}:{kind}")
    return ",".join(parts)


class Batch(dict):
    """Feature name -> Tensor, plus `epoch` and `size` (rows).

    A variable-length feature NAME comes as NAME (the rows' values, end to
    end) and NAME/offsets (int64 [rows + 1]); `ragged(NAME)` and
    `strings(NAME)` split it into rows."""

    def __init__(self, tensors, epoch, size):
        super().__init__((t.name, t) for t in tensors)
        self.epoch = epoch
        self.size = size

    def ragged(self, name):
        """The rows of variable-length feature `name` as a list: `bytes` for a
        bytes feature, else numpy arrays (views into the batch: they keep its
        slot until they are gone; .copy() to keep them longer)."""
        import numpy as np  # only for the helpers: the package itself needs none
        if name + "/offsets" not in self:
            raise KeyError(f"{name!r} is not a variable-length feature of this batch (its "
                           f"tensors: {', '.join(sorted(self))})")
        values = np.from_dlpack(self[name])
        offsets = np.from_dlpack(self[name + "/offsets"]).tolist()
        if values.dtype == np.uint8:
            data = values.tobytes()
            return [data[a:b] for a, b in zip(offsets, offsets[1:])]
        return [values[a:b] for a, b in zip(offsets, offsets[1:])]

    def strings(self, name, encoding="utf-8", errors="strict"):
        """The rows of variable-length bytes feature `name` as `str` (decoded
        with `encoding`; e.g. names, captions, image/filename)."""
        return [row.decode(encoding, errors) for row in self.ragged(name)]


class Loader:
    """An iterable of `Batch`es over shards (a folder, manifest.json, glob or list).

    Epochs as in PyTorch: with the default `epochs=None`, each `iter(loader)`
    is the next epoch (`for epoch in range(E): for batch in loader: ...`),
    `len(loader)` is the batches of one epoch for this rank, and
    `set_epoch(n)` makes the next iteration epoch n (as DistributedSampler).
    With `epochs=N`, one iteration yields all N epochs (`len` = N epochs);
    `epochs=0` is one endless iteration (no `len`).

    features: dict name -> "uint8[3,32,32]" | "int64" | "float32[2]" | "bytes"
        | "int64[]" (variable length) | "float64[4]" (or a spec string);
        default: every feature of the dataset's manifest.json (a warning says
        what is left out or delivered otherwise, and why). A name the dataset
        does not have (manifest, else its first record) is refused here,
        naming the closest one.
    skip_corrupt: skip (and count in stats()) corrupt records instead of
        raising DataLossError; an epoch in which every record was skipped
        raises DataLossError.
    shuffle: True (a seeded permutation of the whole dataset), "quasi"
        (extents of whole records in a random order, records mixed within
        `shuffle_buffer`; for slow and remote storage) or False. Shards without an index or compressed
        ones stream through a shuffle buffer of `shuffle_buffer` records.
    transforms: dict name -> "chw,float16,cifar10,pad=4,flip" (fused uint8 ->
        normalized NCHW on the device, or on the host with no GPU).
    decode: dict name -> "image,random_resized_crop=224,flip" (evaluation:
        "image,resize=256,center_crop=224"; "audio,length=16000,random_crop";
        "int64,length=128,pad=0"): decoded in the pool into fixed-shape rows,
        e.g. uint8 [B, 224, 224, 3] (reader/decode/decode_spec.h).
    cache: keep the dataset (or `cache_features`) resident and serve epochs
        from memory (GPU memory when device >= 0).
    paths may be s3://BUCKET/PREFIX, gs://BUCKET/PREFIX or https:// URLs
        (credentials as the AWS CLI finds them); anonymous=True reads public
        buckets without signing. Indexed remote shards are fetched in extents
        of whole records (extent_bytes, default 8 MiB) ahead of the plan into
        a bounded local cache: cache_dir (default ~/.cache/shardfeed/extents,
        or $SHARDFEED_CACHE_DIR), cache_limit in bytes (default 10 GiB). A
        limit too small for the plan is refused with the limit that works;
        global shuffle needs the whole dataset in the cache, shuffle="quasi"
        only a few extents (each fetched about once per epoch). stats()
        reports remote_requests, remote_bytes and requests_per_record.
    `state_dict()` / `load_state_dict(d)` save and restore the position
    (a small JSON-serializable dict); see LoaderOptions::resume.
    A Loader cannot be pickled or used in DataLoader worker processes: it
    already reads in parallel; iterate it directly.
    device: a GPU ordinal, or -1 (host memory). With no GPU, device >= 0
        falls back to host memory with a warning (once per process).
    seed: any integer (modulo 2**64, as the CLI's --seed). Defaults are the
        CLI's and C++'s: seed 0, prefetch 3, batch_size 256.
    Other arguments mirror the C++ LoaderOptions (reader/loader.h); a value
    out of range is InvalidArgumentError naming it and the range.
    """

    def __init__(self, paths, *, features=None, split="", batch_size=256, shuffle=True, seed=0,
                 shuffle_buffer=10000, epochs=None, drop_remainder=False, io_threads=2,
                 decode_threads=2, prefetch=3, device=-1, rank=None, world_size=None,
                 skip_corrupt=False, cache=False, cache_features=(), cache_budget_mb=0,
                 transforms=None, grow_ring=True, decode=None, anonymous=False,
                 cache_dir=None, cache_limit=None, extent_bytes=None):
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        # s3://, gs://, https:// paths: anonymous=True reads public buckets
        # without credentials (requests unsigned, like --no-sign).
        _shardfeed.set_anonymous(bool(anonymous))
        env_rank, env_world = rank_and_world_size()
        rank = env_rank if rank is None else rank
        world_size = env_world if world_size is None else world_size
        if device is None:
            device = -1
        mode = "quasi" if shuffle == "quasi" else "global"
        if shuffle not in (True, False, "quasi", "global"):
            raise InvalidArgumentError(f"shuffle must be True, False or 'quasi', not {shuffle!r}")
        a, w = _args, "shardfeed.Loader"
        world_size = a.whole(w, "world_size", world_size, 1, 2**31 - 1)
        rank = a.whole(w, "rank", rank, 0, world_size - 1)
        if not isinstance(split, str):
            raise InvalidArgumentError(f"{w}: split={split!r} must be a string ('' for all)")
        if isinstance(cache_features, str):
            cache_features = [cache_features]
        self._epochs = None if epochs is None else a.whole(w, "epochs", epochs, 0, 2**62)
        self._args = (
            [os.fspath(p) for p in paths], split, _spec_string(features),
            a.whole(w, "batch_size", batch_size, 1, 1 << 20), bool(shuffle), a.seed(w, seed),
            a.whole(w, "shuffle_buffer", shuffle_buffer, 0, 1 << 24),
            0 if epochs is None else self._epochs, a.flag(w, "drop_remainder", drop_remainder),
            a.whole(w, "io_threads", io_threads, 1, 1024),
            a.whole(w, "decode_threads", decode_threads, 1, 1024),
            a.whole(w, "prefetch", prefetch, 2, 64), a.whole(w, "device", device, -1, 1023),
            rank, world_size, a.flag(w, "skip_corrupt", skip_corrupt), a.flag(w, "cache", cache),
            [str(f) for f in cache_features],
            int(a.number(w, "cache_budget_mb", cache_budget_mb, 0) * 1000000),
            a.text_map(w, "transforms", transforms), a.flag(w, "grow_ring", grow_ring))
        self._mode = mode
        self._decode = a.text_map(w, "decode", decode)
        if cache_dir is not None and not isinstance(cache_dir, (str, os.PathLike)):
            raise InvalidArgumentError(f"{w}: cache_dir={cache_dir!r} must be a path")
        self._remote = (
            "" if cache_dir is None else os.fspath(cache_dir),
            0 if cache_limit is None else a.whole(w, "cache_limit", cache_limit, 1, 2**63),
            0 if extent_bytes is None else a.whole(w, "extent_bytes", extent_bytes, 1, 1 << 40))
        self._pid = os.getpid()
        self._impl = None
        self._open("")
        self.rank, self.world_size = rank, world_size
        # e.g. "no split given: reading 'train'"; default features left out
        for note in list(self._impl.notes) + list(self._impl.feature_notes):
            warnings.warn(f"shardfeed.Loader: {note}", stacklevel=2)
        if device >= 0 and self._impl.device < 0:
            _warn_host_fallback(device, self._impl.device_note)

    def _create(self, resume):
        try:
            return _shardfeed.Loader(*self._args, resume, self._mode, self._decode,
                                     *self._remote)
        except InvalidArgumentError as e:
            # epochs=None runs the C++ loader with epochs = 0 (endless): say it
            # in the terms the caller used.
            forever = "epochs = 0 (forever) with an epoch that yields no batch"
            if self._epochs is None and forever in str(e):
                raise InvalidArgumentError(
                    str(e).replace(forever, "an epoch yields no batch for this rank")) from None
            raise

    def _open(self, resume):
        # The old engine is closed before the new one is built: with
        # cache=True its resident table (GPU memory) would otherwise exist
        # twice, and the new loader, seeing half the memory, would stream
        # instead and then refuse the resume state. If the new one cannot be
        # built, the old position is reopened and the error raised.
        old = self._impl
        restore = None
        if old is not None:
            # Where to go back to, before anything is closed: if this raises,
            # the loader goes on as it was.
            restore = self._pending[1] if self._pending is not None else old.state()
            self._impl, self._pending = None, None
            old.close()
        try:
            impl = self._create(resume)
        except Exception as e:  # not KeyboardInterrupt: no second full reload after Ctrl-C
            if restore is not None:
                try:
                    self._impl = self._create(restore)
                    self._positioned = _state_to_dict(self._impl.state())["epoch"]
                except Exception as again:  # noqa: BLE001 - the first error is the one raised
                    self._closed_why = (f"reopening it where it stood after a failed "
                                        f"set_epoch()/load_state_dict() failed: {again}")
                    if hasattr(e, "add_note"):
                        e.add_note(f"shardfeed.Loader: the loader is closed: {self._closed_why}")
            raise
        except BaseException:
            if restore is not None:
                self._closed_why = "set_epoch()/load_state_dict() was interrupted"
            raise
        self._impl = impl
        self._pending = None        # (got, state before it): the next epoch's first batch
        state = _state_to_dict(impl.state())
        self._next_epoch = state["epoch"]   # what the next iter() yields
        self._positioned = state["epoch"]   # the C++ loader stands at this epoch's start/resume
        self._done = False
        self._cursor = None

    def _live(self):
        if os.getpid() != self._pid:
            raise Error("a shardfeed.Loader cannot be used in another process (e.g. a torch "
                        "DataLoader worker, num_workers > 0): it already reads and decodes in "
                        "parallel threads; iterate it directly in the training process")
        if self._impl is None:
            raise Error(f"the loader is closed ({getattr(self, '_closed_why', 'close() was called')})")
        return self._impl

    def __iter__(self):
        impl = self._live()
        if self._cursor is not None:  # next(loader) started this iteration: go on with it
            cursor, self._cursor = self._cursor, None
            return cursor
        if self._epochs is not None:
            return _Iteration(self, None)
        epoch = self._next_epoch
        if self._positioned != epoch:
            self.set_epoch(epoch)
        self._next_epoch = epoch + 1
        self._positioned = None
        return _Iteration(self, epoch)

    def __next__(self):
        """The next batch of the current iteration (StopIteration at its end; the
        following call starts the next one)."""
        self._live()
        if self._cursor is None:
            self._cursor = iter(self)
        try:
            return next(self._cursor)
        except StopIteration:
            self._cursor = None
            raise

    def __getitem__(self, index):
        raise TypeError("a shardfeed.Loader is not a map-style dataset: do not wrap it in a "
                        "torch DataLoader: it already batches and reads in parallel; iterate it "
                        "directly: `for batch in loader`")

    def set_epoch(self, epoch):
        """Makes the next iteration epoch `epoch` (from its start)."""
        impl = self._live()
        state = _state_to_dict(impl.state())
        state.update(epoch=int(epoch), position=0, batches=0)
        self._open(_dict_to_state(state))

    def state_dict(self):
        """Where the loader stands: a small JSON-serializable dict."""
        impl = self._live()
        if self._pending is not None:
            return _state_to_dict(self._pending[1])
        return _state_to_dict(impl.state())

    def load_state_dict(self, state):
        """Continues from `state_dict()` of a loader over the same data and options
        (world_size may differ: the rest of the epoch is split over the new ranks)."""
        self._live()
        self._open(_dict_to_state(state))

    def __reduce__(self):
        raise TypeError("a shardfeed.Loader cannot be pickled or sent to another process (e.g. "
                        "torch DataLoader with num_workers > 0): it already reads and decodes in "
                        "parallel threads; iterate it directly in the training process")

    def close(self):
        """Stops every pipeline thread now (also on garbage collection)."""
        impl, self._impl = getattr(self, "_impl", None), None
        self._closed_why = "close() was called"
        if impl is not None:
            impl.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def __len__(self):
        """Batches one iteration yields for this rank."""
        per_epoch = self._live().batches_per_epoch
        if self._epochs is None:
            return per_epoch
        if self._epochs == 0:
            raise TypeError("epochs=0: one endless iteration has no len()")
        return per_epoch * self._epochs

    @property
    def device(self):
        return self._live().device

    @property
    def device_note(self):
        return self._live().device_note

    @property
    def cache_note(self):
        return self._live().cache_note

    @property
    def path_note(self):
        return self._live().path_note

    @property
    def spec(self):
        return self._live().spec

    def stats(self):
        return self._live().stats()


_host_fallback_warned = False


def _warn_host_fallback(device, note):
    """Once per process: device=N was asked for and batches are in host memory."""
    global _host_fallback_warned
    if not _host_fallback_warned:
        _host_fallback_warned = True
        warnings.warn(f"shardfeed.Loader: device={device} asked for, but batches are in host "
                      f"memory ({note or 'no CUDA device'}); pass device=-1 to silence this",
                      RuntimeWarning, stacklevel=3)


class _Iteration:
    """One iteration of a Loader: one epoch (epoch given) or all (None). An
    error from next() (e.g. every slot held) leaves it usable."""

    def __init__(self, loader, epoch):
        self._loader, self._epoch, self._finished = loader, epoch, False

    def __iter__(self):
        return self

    def __next__(self):
        loader = self._loader
        if self._finished or (self._epoch is None and loader._done):
            raise StopIteration
        impl = loader._live()
        if self._epoch is not None and loader._pending is not None:
            (got, state), loader._pending = loader._pending, None
        else:
            state = impl.state()
            got = impl.next()
        if got is None:
            self._finished = loader._done = True
            raise StopIteration
        if self._epoch is not None and got[1] != self._epoch:
            loader._pending, loader._positioned = (got, state), got[1]
            self._finished = True
            raise StopIteration
        return Batch(*got)


_STATE_KEYS = (("seed", "seed"), ("epoch", "epoch"), ("position", "position"),
               ("batches", "batches"), ("world", "world_size"), ("fp", "fingerprint"))


def _state_to_dict(text):
    fields = dict(part.split("=", 1) for part in text.split()[2:])
    d = {name: int(fields[key]) for key, name in _STATE_KEYS[:5]}
    d["fingerprint"] = fields["fp"]
    d["version"] = 1
    return d


def _dict_to_state(d):
    try:
        parts = [f"{key}={int(d[name])}" for key, name in _STATE_KEYS[:5]]
        parts.append(f"fp={d['fingerprint']}")
    except (KeyError, TypeError, ValueError) as e:
        raise InvalidArgumentError(f"not a shardfeed loader state: {d!r} ({e})") from None
    return "shardfeed-state v1 " + " ".join(parts)


def convert(type, input, output, *, prefix="", shard_size=100_000_000, num_shards=0,
            shuffle=True, seed=0, compression="none", threads=0, overwrite=False, strict=False,
            validation_from="", allow_small_shards=False, compression_level=-1, max_side=0,
            quality=90, task_index=None, task_count=None):
    """`shardfeed convert TYPE --input INPUT --output OUTPUT ...`; returns its --json report.

    The keywords are the CLI's flags, with its defaults and ranges
    (shard_size: bytes or "100MB"; seed: any integer, taken modulo 2**64,
    default 0 as everywhere); shard_size below 100 kB needs
    allow_small_shards=True; max_side/quality re-encode large images
    (image-folder); task_index/task_count write one task's share into
    OUTPUT/_parts for `shardfeed.merge(OUTPUT)` (None: from SLURM_ARRAY_TASK_ID
    / JOB_COMPLETION_INDEX when set, else one process).
    """
    def whole(name, value, lo, hi):  # the CLI's ranges, named by keyword
        return _args.whole("convert", name, value, lo, hi)

    report = json.loads(_shardfeed.convert(
        type, os.fspath(input), os.fspath(output), prefix, parse_size(shard_size),
        whole("num_shards", num_shards, 0, 99_999), bool(shuffle),
        _args.seed("convert", seed), compression, whole("threads", threads, 0, 1024), overwrite, strict,
        validation_from, allow_small_shards, whole("compression_level", compression_level, -1, 9),
        whole("max_side", max_side, 0, 65_535), whole("quality", quality, 1, 100),
        -1 if task_index is None else whole("task_index", task_index, 0, 99_998),
        -1 if task_count is None else whole("task_count", task_count, 1, 99_999)))
    for w in report.get("warnings", []):  # what the CLI prints on stderr
        warnings.warn(w, stacklevel=2)
    return report


def check(paths, *, raw=False, threads=0, salvage=None, overwrite=False, decode=None):
    """`shardfeed check PATHS ...`; returns its --json report (problems: [] when clean).

    decode: None (the CLI's default: every image of a dataset made by
    `convert image-folder` decoded whole, header checks elsewhere), True
    (`--decode`: decode every JPEG/PNG image whole) or False (`--no-decode`:
    header checks only).
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    decode_mode = -1 if decode is None else int(_args.flag("check", "decode", decode))
    return json.loads(_shardfeed.check(
        [os.fspath(p) for p in paths], _args.flag("check", "raw", raw),
        _args.whole("check", "threads", threads, 0, 1024), os.fspath(salvage) if salvage else "",
        _args.flag("check", "overwrite", overwrite), decode_mode))
