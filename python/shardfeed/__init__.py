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

`rank`/`world_size` default from the environment of torchrun (RANK,
WORLD_SIZE), Slurm (SLURM_PROCID, SLURM_NTASKS) or Open MPI
(OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE); each rank gets a disjoint
part of every epoch and all ranks the same number of batches.

`convert()` and `check()` run the same code as `shardfeed convert` and
`shardfeed check` and return the same report as their `--json` output.
"""

import json
import os

from . import _shardfeed
from ._shardfeed import DataLossError, Error, InvalidArgumentError, NotFoundError, Tensor

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
    """Feature name -> Tensor, plus `epoch` and `size` (rows)."""

    def __init__(self, tensors, epoch, size):
        super().__init__((t.name, t) for t in tensors)
        self.epoch = epoch
        self.size = size


class Loader:
    """An iterator of `Batch`es over shards (a folder, manifest.json, glob or list).

    features: dict name -> "uint8[3,32,32]" | "int64" | "float32[2]" | "bytes"
        (or a spec string); default: the schema in the dataset's manifest.json.
    transforms: dict name -> "chw,float16,cifar10,pad=4,flip" (fused uint8 ->
        normalized NCHW on the device, or on the host with no GPU).
    cache: keep the dataset (or `cache_features`) resident and serve epochs
        from memory (GPU memory when device >= 0).
    Other arguments mirror the C++ LoaderOptions (reader/loader.h).
    """

    def __init__(self, paths, *, features=None, split="", batch_size=256, shuffle=True, seed=0,
                 shuffle_buffer=10000, epochs=1, drop_remainder=False, io_threads=2,
                 decode_threads=2, prefetch=3, device=-1, rank=None, world_size=None,
                 skip_corrupt=False, cache=False, cache_features=(), cache_budget_mb=0,
                 transforms=None, grow_ring=True):
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        env_rank, env_world = rank_and_world_size()
        rank = env_rank if rank is None else rank
        world_size = env_world if world_size is None else world_size
        if device is None:
            device = -1
        self._impl = _shardfeed.Loader(
            [os.fspath(p) for p in paths], split, _spec_string(features), batch_size, shuffle,
            seed, shuffle_buffer, epochs, drop_remainder, io_threads, decode_threads, prefetch,
            device, rank, world_size, skip_corrupt, cache, list(cache_features),
            int(cache_budget_mb * 1000000), dict(transforms or {}), grow_ring)
        self.rank, self.world_size = rank, world_size

    def __iter__(self):
        return self

    def __next__(self):
        if self._impl is None:
            raise StopIteration
        got = self._impl.next()
        if got is None:
            raise StopIteration
        return Batch(*got)

    def close(self):
        """Stops every pipeline thread now (also on garbage collection)."""
        if self._impl is not None:
            self._impl.close()
            self._impl = None

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
        """Batches per epoch for this rank."""
        return self._impl.batches_per_epoch

    @property
    def device(self):
        return self._impl.device

    @property
    def device_note(self):
        return self._impl.device_note

    @property
    def cache_note(self):
        return self._impl.cache_note

    @property
    def spec(self):
        return self._impl.spec

    def stats(self):
        return self._impl.stats()


def convert(type, input, output, *, prefix="", shard_size=100_000_000, num_shards=0,
            shuffle=True, seed=42, compression="none", threads=0, overwrite=False, strict=False,
            validation_from=""):
    """`shardfeed convert TYPE --input INPUT --output OUTPUT ...`; returns its --json report."""
    return json.loads(_shardfeed.convert(type, os.fspath(input), os.fspath(output), prefix,
                                         int(shard_size), num_shards, shuffle, seed, compression,
                                         threads, overwrite, strict, validation_from))


def check(paths, *, raw=False, threads=0, salvage=None, overwrite=False):
    """`shardfeed check PATHS ...`; returns its --json report (problems: [] when clean)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    return json.loads(_shardfeed.check([os.fspath(p) for p in paths], raw, threads,
                                       os.fspath(salvage) if salvage else "", overwrite))
