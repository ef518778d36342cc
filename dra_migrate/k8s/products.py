"""GPU product names: the catalog of the names NVIDIA's driver gives its GPUs, and how
a name written in a configuration compares with it.

Two spellings of one name reach a configuration, both made from NVML's device name
(``nvmlDeviceGetName``):

* the ``productName`` attribute of ``gpu.nvidia.com`` devices is that name as it is,
  ``NVIDIA H100 80GB HBM3`` (kubernetes-sigs/dra-driver-nvidia-gpu,
  cmd/gpu-kubelet-plugin/nvlib.go: ``productName, ret := device.GetName()``; a MIG
  device carries its parent's, cmd/gpu-kubelet-plugin/mig.go);
* GPU feature discovery's ``nvidia.com/gpu.product`` label is the name with every
  character but ``A-Za-z0-9-_.`` and spaces dropped and its runs of spaces made one
  dash, ``NVIDIA-H100-80GB-HBM3`` (NVIDIA/k8s-device-plugin, internal/lm/resource.go,
  ``sanitise`` and ``getProductName``); a MIG device's label adds ``-MIG-<profile>``
  (the profile with ``+`` as ``.``, internal/resource/nvml-mig-device.go), and a
  shared (time-sliced, MPS) resource that is not renamed adds ``-SHARED``.

The names live in ``catalog/nvidia-products.tsv`` (written by
scripts/refresh_products.py from NVIDIA's own lists; its header names them). They are
read only when a configuration names a product: a run with the built-in mapping never
opens the file. A list of products cannot be complete (a GPU newer than the list is
missing from it), so ``check`` says "misspelled" only for a name that is a catalogued
one written another way: the same name but for case or spaces against dashes, or a
name close to one whose numbers are the same (``HMB3`` for ``HBM3``); any other name
is "unknown", a warning for the caller to give with the catalog's sources.

Intel's GPU DRA driver publishes the ``model`` and ``family`` of a device from its own
table (intel/intel-resource-drivers-for-kubernetes, pkg/gpu/device/models.go,
``ModelDetails``; ``Unknown`` for a device the table lacks): ``catalog/intel-products.tsv``
(scripts/refresh_intel_products.py) holds them, checked the same way. AMD's names come
from each board's FRU EEPROM, which no list holds (docs/configuration.md).
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

from dra_migrate.package_data import package_file

PRODUCTS_FILE = package_file("catalog", "nvidia-products.tsv")
INTEL_PRODUCTS_FILE = package_file("catalog", "intel-products.tsv")
# what Intel's driver publishes for a device its table lacks (pkg/gpu/device/device.go)
INTEL_UNKNOWN = "Unknown"

# the characters GFD keeps (sanitise: regexp "[^A-Za-z0-9-_. ]" removed)
_DROPPED = re.compile(r"[^A-Za-z0-9\-_. ]")
MIG_INFIX, SHARED_SUFFIX = "-MIG-", "-SHARED"  # what GFD adds to a MIG, a shared device's
# a MIG device's label: <product>-MIG-<profile>, then -SHARED when shared
_LABEL_SUFFIX = re.compile(r"^(?P<product>.+?)(?P<suffix>(?:-MIG-[A-Za-z0-9._]+)?(?:-SHARED)?)$")
_NUMBERS = re.compile(r"[0-9]+")
NEAR = 0.8  # difflib ratio of the normalised names: closer is named in a warning
CANDIDATE = 0.6  # closer than this: checked for a misspelling
CLOSE_WORD = 0.75  # a word without digits this close to the catalogued one: misspelled

# how a selector compares a value with the name: the whole of it, or a part
WHOLE, PREFIX, SUFFIX, PART = "whole", "prefix", "suffix", "part"


def gfd_label(name: str) -> str:
    """GPU feature discovery's ``nvidia.com/gpu.product`` value for NVML's ``name``."""
    return "-".join(_DROPPED.sub("", name).split())


def label_parts(value: str) -> tuple[str, str]:
    """A ``nvidia.com/gpu.product`` value as (the product's label, the ``-MIG-<profile>``
    and ``-SHARED`` suffix GFD adds, or "")."""
    found = _LABEL_SUFFIX.fullmatch(value)
    if found is None:
        return value, ""
    return found["product"], found["suffix"]


def _key(text: str) -> str:
    """What two spellings of one name share: GFD's form, case folded."""
    return gfd_label(text).casefold()


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a name written in a configuration is against the catalog."""

    known: bool  # a catalogued name, as written
    misspelled: bool  # a catalogued name written another way: ``suggestion`` is it
    suggestion: str = ""  # the catalogued name meant (misspelled), or the closest one
    why: str = ""  # what differs, when misspelled


@dataclass(frozen=True, slots=True)
class Products:
    """The catalogued names, and where they come from (the file's ``# source:`` lines)."""

    names: tuple[str, ...]  # NVML's names
    sources: tuple[str, ...]
    labels: tuple[str, ...] = ()  # GFD's labels of the names
    vendor: str = "NVIDIA"  # whose GPU names, in messages
    said: str = "the name NVML gives the GPU"  # what the attribute's value is
    spaced: str = "the driver publishes NVML's name, with spaces"  # dashes for spaces

    def __post_init__(self) -> None:
        if not self.labels:
            object.__setattr__(self, "labels", tuple(dict.fromkeys(map(gfd_label, self.names))))

    def spellings(self, form: str, fold: str = "") -> tuple[str, ...]:
        """The names as a value of ``form`` ("label" or "name") spells them, with the
        case ``fold`` ("lower", "upper") a selector applies to the value first."""
        names = self.labels if form == "label" else self.names
        if fold == "lower":
            return tuple(n.lower() for n in names)
        if fold == "upper":
            return tuple(n.upper() for n in names)
        return names

    def check(self, value: str, form: str, how: str = WHOLE, fold: str = "") -> Verdict:
        """``value`` as a label (``form`` "label": the whole label value, suffixes and
        all) or a productName (``form`` "name"), compared ``how`` (WHOLE, PREFIX,
        SUFFIX, PART) after the selector made the name ``fold``'s case."""
        suffix = ""
        if form == "label":
            value, suffix = label_parts(value)
        spelled = self.spellings(form, fold)
        units = _units(spelled, len(value), how)
        if value in units:
            return Verdict(True, False)
        if not value:
            return Verdict(False, False)
        keys: dict[str, str] = {}
        # a part a letter or two shorter or longer: a misspelled part drops or doubles one
        around = units.union(*(_units(spelled, len(value) + d, how) for d in (-2, -1, 1, 2)))
        for unit in sorted(around, key=lambda u: (abs(len(u) - len(value)), u)):
            keys.setdefault(_key(unit), unit)
        same = keys.get(_key(value))
        if same is not None:
            return Verdict(False, True, same + suffix, self._difference(value, same, form))
        # candidates: a short word with two letters swapped is no closer than 0.75
        close = difflib.get_close_matches(_key(value), list(keys), n=10, cutoff=CANDIDATE)
        for key in close:
            if _misspelling(_key(value), key):
                why = f"a misspelling of a name in the catalog of {self.vendor} GPU names"
                return Verdict(False, True, keys[key] + suffix, why)
        near = [k for k in close[:1] if _ratio(_key(value), k) >= NEAR]
        return Verdict(False, False, keys[near[0]] + suffix if near else "")

    def _difference(self, written: str, catalogued: str, form: str) -> str:
        """What tells apart two spellings of one name."""
        if written.casefold() == catalogued.casefold():
            return "values compare case-sensitively"
        if form == "name":
            return self.spaced
        return "GPU feature discovery writes the name with dashes for spaces"


def _units(spelled: tuple[str, ...], size: int, how: str) -> frozenset[str]:
    """What a value compared ``how`` is compared with: the names, or their parts of
    the value's length."""
    if how == WHOLE:
        return frozenset(spelled)
    if size < 1:
        return frozenset()
    if how == PREFIX:
        return frozenset(n[:size] for n in spelled if len(n) >= size)
    if how == SUFFIX:
        return frozenset(n[-size:] for n in spelled if len(n) >= size and size)
    return frozenset(n[i : i + size] for n in spelled for i in range(len(n) - size + 1))


def _misspelling(written: str, catalogued: str) -> bool:
    """Whether the normalised ``written`` is ``catalogued`` misspelled rather than
    another product: word for word the same but for words with the same letters in
    another order (``HMB3`` for ``HBM3``) or, in a word without digits, a letter or two
    (``NVIDA``, ``Tesls``). A word with digits names the product (A100, H100, L40,
    80GB, SXM4, HBM3): another one there is another GPU, maybe one the catalog lacks."""
    words, known = written.split("-"), catalogued.split("-")
    if len(words) != len(known) or words == known:
        return False
    for word, catalogued_word in zip(words, known, strict=True):
        if word == catalogued_word or sorted(word) == sorted(catalogued_word):
            continue
        if _NUMBERS.search(word) or _NUMBERS.search(catalogued_word):
            return False
        if _ratio(word, catalogued_word) < CLOSE_WORD:
            return False
    return True


def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b).ratio()


@functools.cache
def load_products() -> Products:
    """The catalog (read once, on first use)."""
    names: list[str] = []
    sources: list[str] = []
    with open(PRODUCTS_FILE, encoding="utf-8") as handle:
        for line in handle:
            line = line.rstrip("\n")
            if line.startswith("# source: "):
                sources.append(line.removeprefix("# source: "))
            elif line and not line.startswith("#"):
                names.append(line.split("\t", 1)[0])
    return Products(tuple(names), tuple(sources))


def _read_tsv(path: str) -> tuple[list[list[str]], list[str]]:
    """The rows (their tab-separated columns) and ``# source:`` lines of a catalog file."""
    rows: list[list[str]] = []
    sources: list[str] = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.rstrip("\n")
            if line.startswith("# source: "):
                sources.append(line.removeprefix("# source: "))
            elif line and not line.startswith("#"):
                rows.append(line.split("\t"))
    return rows, sources


@functools.cache
def load_intel(column: int) -> Products:
    """Intel's catalog: the models (``column`` 0) or the families (1), and ``Unknown``."""
    rows, sources = _read_tsv(INTEL_PRODUCTS_FILE)
    names = tuple(dict.fromkeys([*(row[column] for row in rows), INTEL_UNKNOWN]))
    what = ("model", "family")[column]
    return Products(
        names,
        tuple(sources),
        labels=names,
        vendor="Intel",
        said=f"the {what} Intel's GPU DRA driver publishes",
        spaced=f"the {what}'s spaces and dashes are as the driver's table has them",
    )


# the attributes a driver publishes a catalog's names in: (domain, name) -> its catalog
CATALOGS: dict[tuple[str, str], Callable[[], Products]] = {
    ("gpu.nvidia.com", "productName"): load_products,
    ("gpu.intel.com", "model"): functools.partial(load_intel, 0),
    ("gpu.intel.com", "family"): functools.partial(load_intel, 1),
}
PRODUCT_ATTRIBUTES = frozenset(CATALOGS)


def catalog_for(domain: str, name: str) -> Products | None:
    """The catalog of the names attribute ``domain``/``name`` holds, or None."""
    load = CATALOGS.get((domain, name))
    return load() if load is not None else None


def catalog_said(products: Products | None = None) -> str:
    """Where a catalog's names come from, for a message: the lists and their dates."""
    said = []
    for source in (products or load_products()).sources:
        where, _at, rest = source.partition("@")
        _commit, _sp, note = rest.partition(" ")
        said.append(f"{where} {note.split(';')[0]})")
    return "; ".join(said)
