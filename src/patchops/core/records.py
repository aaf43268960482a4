"""Record classes for the everyday commands, without dataclasses' code generation.

`@dataclass` compiles each class's `__init__`, `__repr__` and `__eq__` (a frozen one also
`__setattr__`, `__delattr__` and `__hash__`) with `exec`: about 4.5M instructions a class on
CPython 3.11, and `status` defines thirteen, over a third of what it adds to the typer+rich
import floor (`status` must start within 1.3x of that floor). `@record` gives the same
constructor (positional or keyword, defaults, default factories), repr, field-wise
equality, hashing and immutability from functions shared by every record. Its constructor
is slower than a generated one, which no everyday command notices: they build a few dozen
records a run. Lint's findings and results are records too, for a lint answered from its
result cache; the ops, the facts and the parsed configs keep dataclasses, whose `fields` metadata
and `replace` they use.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Callable, Dict, Optional, Tuple

_MISSING = object()


class StrEnum(str, Enum):
    """A state spelled one way: a str whose str(), f-string and JSON are its value (enum.StrEnum, 3.11+).

    A `(str, Enum)` member prints as `Class.NAME` on 3.11; this one prints what the plain string
    did, so saved files, JSON and messages read the same.
    """

    def __str__(self) -> str:
        return self.value

    __format__ = str.__format__


class FrozenRecordError(AttributeError):
    """Assigning to a field of a frozen record (dataclasses raises FrozenInstanceError)."""


class _Field:
    __slots__ = ("default", "default_factory", "repr", "compare")

    def __init__(self, default: Any, default_factory: Optional[Callable[[], Any]], repr: bool, compare: bool):
        self.default, self.default_factory, self.repr, self.compare = default, default_factory, repr, compare


def field(*, default: Any = _MISSING, default_factory: Optional[Callable[[], Any]] = None,
          repr: bool = True, compare: bool = True) -> Any:
    """Declare a field's default, default factory, or that repr / equality leave it out."""
    return _Field(default, default_factory, repr, compare)


def record(cls=None, *, frozen: bool = False):
    """Make `cls` a record of its annotated fields, in order (`@record` or `@record(frozen=True)`)."""

    def wrap(cls):
        specs = _fields_of(cls)
        cls.__record_fields__ = tuple(name for name, _ in specs)
        cls.__record_defaults__ = tuple((spec.default, spec.default_factory) for _, spec in specs)
        cls.__record_repr__ = tuple(name for name, spec in specs if spec.repr)
        cls.__record_compare__ = tuple(name for name, spec in specs if spec.compare)
        cls.__init__ = _init_frozen if frozen else _init
        cls.__repr__ = _repr
        cls.__eq__ = _eq
        if frozen:
            cls.__setattr__ = cls.__delattr__ = _refuse
            cls.__hash__ = _hash
        else:
            cls.__hash__ = None   # mutable and compared by value, as a dataclass: unhashable
        return cls

    return wrap if cls is None else wrap(cls)


def _fields_of(cls) -> Tuple[Tuple[str, _Field], ...]:
    """Return (name, _Field) per annotated field of `cls`, in order (records do not inherit fields)."""
    specs = []
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
            continue
        value = cls.__dict__.get(name, _MISSING)
        spec = value if isinstance(value, _Field) else _Field(value, None, True, True)
        if spec.default is _MISSING:
            if name in cls.__dict__:
                delattr(cls, name)   # a factory's field has no class-level default
        else:
            setattr(cls, name, spec.default)
        if specs and _has_default(specs[-1][1]) and not _has_default(spec):
            raise TypeError(f"{cls.__name__}: field {name!r} without a default follows one with a default")
        specs.append((name, spec))
    return tuple(specs)


def _has_default(spec: _Field) -> bool:
    return spec.default is not _MISSING or spec.default_factory is not None


def _values(self, args, kwargs) -> list:
    names = self.__record_fields__
    if len(args) > len(names):
        raise TypeError(f"{type(self).__name__}() takes {len(names)} positional arguments, got {len(args)}")
    values = list(args)
    for index in range(len(args), len(names)):
        name = names[index]
        if name in kwargs:
            values.append(kwargs.pop(name))
            continue
        default, factory = self.__record_defaults__[index]
        if default is not _MISSING:
            values.append(default)
        elif factory is not None:
            values.append(factory())
        else:
            raise TypeError(f"{type(self).__name__}() missing argument {name!r}")
    if kwargs:
        name = next(iter(kwargs))
        raise TypeError(f"{type(self).__name__}() got {'a second value' if name in names else 'an unexpected argument'} "
                        f"{name!r}")
    return values


def _init(self, *args, **kwargs) -> None:
    for name, value in zip(self.__record_fields__, _values(self, args, kwargs)):
        setattr(self, name, value)


def _init_frozen(self, *args, **kwargs) -> None:
    for name, value in zip(self.__record_fields__, _values(self, args, kwargs)):
        object.__setattr__(self, name, value)


def _repr(self) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__record_repr__)
    return f"{type(self).__qualname__}({shown})"


def _compared(self) -> tuple:
    return tuple(getattr(self, name) for name in self.__record_compare__)


def _eq(self, other):
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _compared(self) == _compared(other)


def _hash(self) -> int:
    return hash(_compared(self))


def _refuse(self, name, *value):
    raise FrozenRecordError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")


def field_names(record_or_class) -> Tuple[str, ...]:
    """Return the field names of a record or record class, in order (dataclasses.fields' names)."""
    return record_or_class.__record_fields__


def replace(obj, **changes):
    """Return a copy of record `obj` with `changes` (dataclasses.replace for records)."""
    values = {name: getattr(obj, name) for name in obj.__record_fields__}
    unknown = set(changes) - set(values)
    if unknown:
        raise TypeError(f"{type(obj).__name__} has no field {sorted(unknown)[0]!r}")
    return type(obj)(**{**values, **changes})


def as_dict(obj) -> Dict[str, Any]:
    """Return record `obj` as a dict, records, lists, tuples and dicts inside it converted too."""
    return {name: _plain(getattr(obj, name)) for name in obj.__record_fields__}


def _plain(value):
    if hasattr(type(value), "__record_fields__"):
        return as_dict(value)
    if isinstance(value, (list, tuple)):
        items = [_plain(item) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, dict):
        return {_plain(key): _plain(item) for key, item in value.items()}
    return value
