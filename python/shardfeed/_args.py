"""Argument checks for the public API: a wrong value is InvalidArgumentError
(also a ValueError) naming the function, the argument and its range, before
anything reaches the C++ engine (whose pybind11 errors would list its raw
signature instead). The ranges are the CLI's (cli/bench_command.cc,
cli/convert_command.cc)."""

import numbers

from ._shardfeed import InvalidArgumentError

SEED_RANGE = "any integer (taken modulo 2**64, as the CLI's --seed)"


def whole(where, name, value, lo, hi=None):
    """`value` as an int in [lo, hi] (hi None: no upper bound); bools refused."""
    if (isinstance(value, bool) or not isinstance(value, numbers.Integral)
            or value < lo or (hi is not None and value > hi)):
        bound = f"in [{lo}, {hi}]" if hi is not None else f">= {lo}"
        raise InvalidArgumentError(f"{where}: {name}={value!r} must be an integer {bound}")
    return int(value)


def seed(where, value):
    """Any integer, modulo 2**64 (what every seed of the CLI and C++ API takes)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidArgumentError(f"{where}: seed={value!r} must be {SEED_RANGE}")
    return int(value) % (1 << 64)


def flag(where, name, value):
    """True/False (or 0/1)."""
    if isinstance(value, bool) or (isinstance(value, numbers.Integral) and value in (0, 1)):
        return bool(value)
    raise InvalidArgumentError(f"{where}: {name}={value!r} must be True or False")


def number(where, name, value, lo):
    """A real number >= lo."""
    if (isinstance(value, bool) or not isinstance(value, numbers.Real) or value != value
            or value < lo or value == float("inf")):
        raise InvalidArgumentError(f"{where}: {name}={value!r} must be a number >= {lo}")
    return value


def text_map(where, name, value):
    """None or a dict of str -> str."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise InvalidArgumentError(f"{where}: {name} must be a dict of feature name -> spec "
                                   f"string, not {value!r}")
    return dict(value)
