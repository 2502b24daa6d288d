#!/usr/bin/env python3
"""Regenerates backends/cuda/data/policy.json (the CUDA backend's policy) from the cuda-wheels farm fixtures.

    python3 scripts/derive_policy.py                 # writes backends/cuda/data/policy.json
    python3 scripts/derive_policy.py --check         # exits 1 when the committed file is stale
    python3 scripts/derive_policy.py --fixtures DIR --out FILE --version 2026-09-01

Inputs (read-only, under ../shared/fixtures/cuda-wheels by default):
  defaults/arch_policy.yml               -> arch_policy (linux, windows, linux_aarch64), arch_exceptions
  derived/package_configs_summary.json   -> packages (arch overrides, keyed by PEP 503 index name)
  defaults/scraped_torch_matrix.json     -> pytorch_matrix (shipped cells, by torch minor)
  defaults/pytorch-build-cuda-cache.json -> torch_archs (linux, linux_aarch64): the TORCH_CUDA_ARCH_LIST
                                            PyTorch built each torch release with, per CUDA line
And from this repository: scripts/data/torch_archs.json -> the torch_archs rows the farm lacks (Windows,
the newest releases), each with its source (backends/cuda/data/SOURCES.md).
The other sections (backend, torch_family, pypi_line, fallback) are owned by
wheelfit and written down in OWNED below; see policies/README.md for where each fact comes from.

Standard library only. arch_policy.yml is read with a line parser that understands exactly the
shapes that file uses (top-level "name:" keys holding '"key": "value"' lines, '#' comments) and
fails loudly on anything else, so a change of shape upstream is noticed rather than misread.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))
from derived_file import add_output_args, write_or_check  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DEFAULT_FIXTURES = REPO.parent / "shared" / "fixtures" / "cuda-wheels"
DEFAULT_OUT = REPO / "backends" / "cuda" / "data" / "policy.json"
SOURCED_TORCH_ARCHS = REPO / "scripts" / "data" / "torch_archs.json"

# The date of the farm data this file is derived from (deploy of 2026-08-22, main 2eeda9b).
DEFAULT_VERSION = "2026-08-22"
FORMAT = 2

ARCH_TARGET = re.compile(r"^[0-9]+\.[0-9]+[af]?(\+ptx)?$", re.IGNORECASE)
DOTTED2 = re.compile(r"^[0-9]+\.[0-9]+$")
DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")

# Scraped platform name -> farm platform key.
PLATFORMS = {"linux_x86_64": "linux", "linux_aarch64": "linux_aarch64", "windows": "windows"}

# Facts wheelfit owns (not in the farm data). Keep in step with policies/README.md.
OWNED = {
    # The torch family table (policies/README.md; sources in backends/cuda/data/SOURCES.md).
    # torchaudio's last release is 2.11, which supports torch >= 2.11 (pytorch/audio#4212): the
    # torch minors after 2.11 pin torchaudio 2.11.
    "torch_family": {
        "2.4": ["0.19", "2.4"], "2.5": ["0.20", "2.5"], "2.6": ["0.21", "2.6"],
        "2.7": ["0.22", "2.7"], "2.8": ["0.23", "2.8"], "2.9": ["0.24", "2.9"],
        "2.10": ["0.25", "2.10"], "2.11": ["0.26", "2.11"], "2.12": ["0.27", "2.11"],
        "2.13": ["0.28", "2.11"], "2.14": ["0.29", "2.11"],
    },
    # The CUDA line of the torch wheel PyPI serves, per torch minor. Only facts we are sure of:
    # PyPI's Windows torch is CPU-only; its linux_aarch64 CUDA line is not recorded (unknown).
    "pypi_line": {
        "linux": {"2.0": "11.7", "2.1": "12.1", "2.2": "12.1", "2.3": "12.1", "2.4": "12.1",
                  "2.5": "12.4", "2.6": "12.4", "2.7": "12.6", "2.8": "12.8", "2.9": "12.8"},
        "windows": {},
        "linux_aarch64": {},
    },
    # The CUDA backend's semantics (policies/README.md, section backend): the line's notation,
    # the farm's local-label grammar (+cu128torch2.8, +pt2.8cu128, legacy +cu124torch210) and
    # torch's own (+cu128, +cu121.with.pypi.cudnn), PyTorch's index, the device code sections,
    # and the driver rule: CUDA minor-version compatibility, with the minimum NVIDIA driver per
    # CUDA major (CUDA release notes).
    "backend": {
        "line": {"key": "cuda", "prefix": "cu", "name": "CUDA"},
        "combo_labels": ["cu{line:nodot}torch{torch}", "pt{torch}cu{line:nodot}"],
        "torch_labels": ["cu{line:nodot}", "cu{line:nodot}.*", "cuda{line}"],
        "torch_index": "https://download.pytorch.org/whl/cu{line_nodot}",
        "device": {"name": "GPU arch", "prefix": "sm ", "code_sections": [".nv_fatbin", "__nv_relfatbin"],
                   "runtime_libraries": ["libcudart.so.{major}", "cudart64_{major}.dll"]},
        # The errors CUDA and torch print when a demand fails (what `explain` names).
        "errors": {
            "no_kernel": "CUDA error: no kernel image is available for execution on the device",
            "no_device": "CUDA error: no CUDA-capable device is detected",
            "driver_too_old": "CUDA driver version is insufficient for CUDA runtime version",
            "wrong_torch": "AssertionError: Torch not compiled with CUDA enabled",
        },
        "driver": {
            "rule": "same_major",
            "floors": {
                "11": {"linux": "450.80.02", "windows": "452.39"},
                "12": {"linux": "525.60.13", "windows": "528.33"},
                "13": {"linux": "580", "windows": "580"},
            },
        },
    },
    # The predecessor's tier-2 combos (comfy-env packages/cuda_wheels.py).
    "fallback": {
        "x86_64": {"line": "12.8", "torch": "2.8"},
        "aarch64": {"line": "13.0", "torch": "2.10"},
    },
}


class DeriveError(Exception):
    pass


def vkey(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def minor(text: str) -> str:
    parts = text.split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts):
        raise DeriveError(f"'{text}' is not a dotted version")
    return f"{int(parts[0])}.{int(parts[1])}"


def check_arch_list(where: str, text: str) -> str:
    if not isinstance(text, str):
        raise DeriveError(f"{where}: expected an arch list string, got {text!r}")
    targets = [t for t in re.split(r"[;\s]+", text) if t]
    if not targets or not all(ARCH_TARGET.match(t) for t in targets):
        raise DeriveError(f"{where}: '{text}' is not an arch list")
    return text


def parse_arch_policy_yml(path: Path) -> dict[str, dict[str, str]]:
    """{"arch_policy": {"12.4": "..."}, "arch_policy_aarch64": {...}, "arch_exceptions": {...}}."""
    sections: dict[str, dict[str, str]] = {}
    current = None
    for lineno, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        where = f"{path.name}:{lineno}"
        top = re.match(r"^([A-Za-z_][A-Za-z0-9_]*):$", line)
        if top:
            current = sections.setdefault(top.group(1), {})
            continue
        entry = re.match(r'^\s+"([^"]+)":\s*"([^"]*)"$', line)
        if entry and current is not None:
            key, value = entry.groups()
            if key in current:
                raise DeriveError(f"{where}: duplicate key '{key}'")
            current[key] = check_arch_list(where, value)
            continue
        raise DeriveError(f"{where}: unexpected line shape: {raw!r}")
    for name in ("arch_policy", "arch_policy_aarch64", "arch_exceptions"):
        if name not in sections:
            raise DeriveError(f"{path.name}: no '{name}' section")
    return sections


def sort_dotted(d: dict) -> dict:
    return {k: d[k] for k in sorted(d, key=vkey)}


def derive_arch(fixtures: Path) -> tuple[dict, dict]:
    yml = parse_arch_policy_yml(fixtures / "defaults" / "arch_policy.yml")
    for name in ("arch_policy", "arch_policy_aarch64"):
        for key in yml[name]:
            if not DOTTED2.match(key):
                raise DeriveError(f"arch_policy.yml: {name}: '{key}' is not a CUDA major.minor")
    for key in yml["arch_exceptions"]:
        cuda, _, torch = key.partition("/")
        if not DOTTED2.match(cuda) or not DOTTED2.match(torch):
            raise DeriveError(f"arch_policy.yml: arch_exceptions: '{key}' is not <cuda>/<torch-minor>")
    x86 = sort_dotted(yml["arch_policy"])
    policy = {
        # The farm's arch_policy table serves both x86_64 platforms (Linux and Windows).
        "linux": x86,
        "windows": dict(x86),
        "linux_aarch64": sort_dotted(yml["arch_policy_aarch64"]),
    }
    exceptions = {k: yml["arch_exceptions"][k]
                  for k in sorted(yml["arch_exceptions"], key=lambda k: tuple(vkey(p) for p in k.split("/")))}
    return policy, exceptions


def derive_packages(fixtures: Path) -> dict:
    path = fixtures / "derived" / "package_configs_summary.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    out: dict[str, dict] = {}
    for pkg in data["packages"]:
        name = pkg["index_name"]
        if name != re.sub(r"[-_.]+", "-", name).lower():
            raise DeriveError(f"{path.name}: index_name '{name}' is not PEP 503 normalised")
        entry: dict = {}
        for key in ("arch_list", "arch_list_aarch64"):
            if key in pkg:
                entry[key] = check_arch_list(f"{path.name}: {name}.{key}", pkg[key])
        for src, key in (("arch_list_by_cuda", "arch_list_by_line"), ("arch_list_by_cuda_aarch64", "arch_list_by_line_aarch64")):
            if src in pkg:
                rows = {}
                for cuda, text in pkg[src].items():
                    if not DOTTED2.match(cuda):
                        raise DeriveError(f"{path.name}: {name}.{key}: '{cuda}' is not a CUDA major.minor")
                    rows[cuda] = check_arch_list(f"{path.name}: {name}.{key}.{cuda}", text)
                entry[key] = sort_dotted(rows)
        if entry:
            if name in out:
                raise DeriveError(f"{path.name}: two packages named '{name}'")
            out[name] = entry
    return {k: out[k] for k in sorted(out)}


def derive_matrix(fixtures: Path) -> dict:
    path = fixtures / "defaults" / "scraped_torch_matrix.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    cells: dict[str, dict[str, dict[str, set[str]]]] = {p: {} for p in PLATFORMS.values()}
    for row in data["combos"]:
        platform = PLATFORMS.get(row["platform"])
        if platform is None:
            raise DeriveError(f"{path.name}: unknown platform '{row['platform']}'")
        m = re.fullmatch(r"cu([0-9]+)([0-9])", row["cuda"])
        if not m:
            raise DeriveError(f"{path.name}: '{row['cuda']}' is not a CUDA tag")
        cuda = f"{int(m.group(1))}.{m.group(2)}"
        torch = minor(row["torch"])  # a minor counts as shipped if any patch release shipped
        python = row["python"]
        if not DOTTED2.match(python):
            raise DeriveError(f"{path.name}: '{python}' is not a Python major.minor")
        cells[platform].setdefault(cuda, {}).setdefault(torch, set()).add(python)
    return {
        platform: {cuda: {torch: sorted(pys, key=vkey) for torch, pys in sort_dotted(by_torch).items()}
                   for cuda, by_torch in sort_dotted(by_cuda).items()}
        for platform, by_cuda in sorted(cells.items())
    }


# pytorch-build-cuda-cache.json's CPU arch -> farm platform key (its rows are PyTorch's Linux builds).
CACHE_PLATFORMS = {"x86_64": "linux", "aarch64": "linux_aarch64"}
CACHE_SOURCE = "pytorch {tag} .ci/manywheel/build_cuda.sh TORCH_CUDA_ARCH_LIST (cuda-wheels pytorch-build-cuda-cache.json)"


def derive_torch_archs(fixtures: Path) -> dict:
    """platform -> torch minor -> line -> {list, source, date}; one row per torch minor (its newest patch)."""
    path = fixtures / "defaults" / "pytorch-build-cuda-cache.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    rows: dict[str, dict[str, dict[str, tuple]]] = {}
    for key, entry in data.items():
        m = re.fullmatch(r"v([0-9]+\.[0-9]+\.[0-9]+)/([0-9]+\.[0-9]+)/([a-z0-9_]+)", key)
        if not m or m.group(3) not in CACHE_PLATFORMS:
            raise DeriveError(f"{path.name}: '{key}' is not v<torch>/<cuda>/<x86_64|aarch64>")
        tag, line, platform = "v" + m.group(1), m.group(2), CACHE_PLATFORMS[m.group(3)]
        raw = ";".join(t for t in entry["raw"].split(";") if t.strip())
        archs = check_arch_list(f"{path.name}: {key}", raw)
        date = entry["fetched_at"][:10]
        if not DATE.fullmatch(date):
            raise DeriveError(f"{path.name}: {key}: fetched_at '{entry['fetched_at']}' is not a date")
        slot = rows.setdefault(platform, {}).setdefault(minor(m.group(1)), {})
        if line in slot and vkey(slot[line][0][1:]) >= vkey(tag[1:]):
            continue  # an older patch of the same minor: the newest one speaks for the minor
        slot[line] = (tag, {"list": archs, "source": CACHE_SOURCE.format(tag=tag), "date": date})
    return {platform: {torch: {line: by_line[line][1] for line in sort_dotted(by_line)}
                       for torch, by_line in sort_dotted(by_torch).items()}
            for platform, by_torch in sorted(rows.items())}


def read_sourced_torch_archs(path: Path) -> dict:
    """platform -> torch minor -> line -> {list, source, date} from scripts/data/torch_archs.json."""
    data = json.loads(path.read_text(encoding="utf-8"))
    sources = data["sources"]
    for key, src in sources.items():
        if set(src) != {"source", "date"} or not src["source"] or not DATE.fullmatch(src["date"]):
            raise DeriveError(f"{path.name}: sources.{key}: expected a non-empty source and a YYYY-MM-DD date")
    rows: dict = {}
    for platform, by_torch in data["rows"].items():
        if platform not in PLATFORMS.values():
            raise DeriveError(f"{path.name}: rows.{platform}: not a platform key")
        for torch, by_line in by_torch.items():
            if not DOTTED2.match(torch):
                raise DeriveError(f"{path.name}: rows.{platform}.{torch}: not a torch major.minor")
            for line, (archs, key) in by_line.items():
                where = f"{path.name}: rows.{platform}.{torch}.{line}"
                if not DOTTED2.match(line):
                    raise DeriveError(f"{where}: not a CUDA major.minor")
                if key not in sources:
                    raise DeriveError(f"{where}: unknown source '{key}'")
                rows.setdefault(platform, {}).setdefault(torch, {})[line] = {
                    "list": check_arch_list(where, archs), **sources[key]}
    return rows


def merge_torch_archs(farm: dict, sourced: dict) -> dict:
    """The farm's rows with the sourced ones added; a row both give is an error (one source per row)."""
    merged = {p: {t: dict(lines) for t, lines in by_torch.items()} for p, by_torch in farm.items()}
    for platform, by_torch in sourced.items():
        for torch, by_line in by_torch.items():
            slot = merged.setdefault(platform, {}).setdefault(torch, {})
            for line, row in by_line.items():
                if line in slot:
                    raise DeriveError(f"torch_archs: {platform} {torch} {line} is both in the farm's data and in "
                                      f"{SOURCED_TORCH_ARCHS.name}")
                slot[line] = row
    return {platform: {torch: {line: by_line[line] for line in sort_dotted(by_line)}
                       for torch, by_line in sort_dotted(by_torch).items()}
            for platform, by_torch in sorted(merged.items())}


def derive(fixtures: Path, version: str) -> dict:
    arch_policy, arch_exceptions = derive_arch(fixtures)
    family = {k: {"torchvision": v[0], "torchaudio": v[1]} for k, v in OWNED["torch_family"].items()}
    return {
        "_comment": "Generated by scripts/derive_policy.py from the cuda-wheels fixtures; "
                    "format documented in policies/README.md. Do not hand-edit: change the script.",
        "format": FORMAT,
        "version": version,
        "backend": OWNED["backend"],
        "arch_policy": arch_policy,
        "arch_exceptions": arch_exceptions,
        "packages": derive_packages(fixtures),
        "pytorch_matrix": derive_matrix(fixtures),
        "torch_family": family,
        "torch_archs": merge_torch_archs(derive_torch_archs(fixtures), read_sourced_torch_archs(SOURCED_TORCH_ARCHS)),
        "pypi_line": OWNED["pypi_line"],
        "fallback": OWNED["fallback"],
    }


def dump(value, depth: int, flat_at: int) -> str:
    """JSON with one object member per line down to `flat_at` levels, flat below that."""
    if not isinstance(value, dict) or depth >= flat_at or not value:
        return json.dumps(value, ensure_ascii=True, separators=(", ", ": "))
    pad = "  " * (depth + 1)
    items = [f"{pad}{json.dumps(k)}: {dump(v, depth + 1, flat_at)}" for k, v in value.items()]
    return "{\n" + ",\n".join(items) + "\n" + "  " * depth + "}"


def render(policy: dict) -> str:
    # How deep each section is laid out line by line (the rest stays on one line).
    flat = {"arch_policy": 2, "arch_exceptions": 1, "packages": 2, "pytorch_matrix": 2,
            "torch_family": 1, "torch_archs": 3, "pypi_line": 1, "fallback": 1, "backend": 1}
    lines = [f"  {json.dumps(k)}: {dump(v, 1, flat.get(k, 0) + 1)}" for k, v in policy.items()]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fixtures", type=Path, default=DEFAULT_FIXTURES,
                    help="the cuda-wheels fixture folder (default: %(default)s)")
    add_output_args(ap, DEFAULT_OUT)
    ap.add_argument("--version", default=DEFAULT_VERSION, help="the policy's version string (default: %(default)s)")
    args = ap.parse_args()
    try:
        text = render(derive(args.fixtures, args.version))
    except (DeriveError, OSError, KeyError, ValueError) as e:
        print(f"derive_policy: {e}", file=sys.stderr)
        return 2
    json.loads(text)  # the renderer must emit valid JSON
    return write_or_check(args.out, text, args.check, "scripts/derive_policy.py",
                          f"derive_policy: wrote {args.out} ({len(text)} bytes)")


if __name__ == "__main__":
    sys.exit(main())
