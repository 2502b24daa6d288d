#!/usr/bin/env python3
"""The C API through ctypes (examples/embed/python/wheelfit_ctypes.py), against the CLI.

    test_capi.py --lib build/lib/libwheelfit.so --wheelfit build/apps/wheelfit/wheelfit \
                 --farmgen build/scripts/farmgen/wheelfit-farmgen --source .

Each check prints one line; the script exits 1 on the first mismatch (its message says what
differed), 0 when all pass. Run by ctest (label capi).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--wheelfit", required=True)
    ap.add_argument("--farmgen", required=True)
    ap.add_argument("--source", required=True)
    args = ap.parse_args()
    source = Path(args.source)
    sys.path.insert(0, str(source / "examples" / "embed" / "python"))
    from wheelfit_ctypes import Wheelfit  # noqa: E402  (the example is the binding under test)

    wf = Wheelfit(args.lib)
    failures = 0

    def check(name: str, ok: bool, detail: str = "") -> None:
        nonlocal failures
        print(("ok    " if ok else "FAIL  ") + name + ("" if ok else ": " + detail))
        failures += 0 if ok else 1

    env = dict(os.environ)
    for key in list(env):
        if key.startswith(("WHEELFIT_OVERRIDE_", "CONDA_OVERRIDE_")) or key in ("WHEELFIT_POLICY", "COMFY_ENV_CUDA_WHEELS_INDEX"):
            del env[key]
    os.environ.clear()
    os.environ.update(env)

    with tempfile.TemporaryDirectory() as tmp:
        farm = Path(tmp) / "farm"
        loop = Path(tmp) / "loop"
        loop.symlink_to("loop")  # ELOOP for anything under it
        subprocess.run([args.farmgen, "--out", str(farm), "--packages", "6"], check=True, capture_output=True)
        # Three of the farm's packages, in a comfy-env.toml and given directly.
        wanted = sorted(json.loads((farm / "packages.json").read_text())["packages"])[:3]
        cfg = Path(tmp) / "proj" / "comfy-env.toml"
        cfg.parent.mkdir()
        cfg.write_text('python = "3.12"\n[cuda]\npackages = %s\n' % json.dumps(wanted))

        cli_objects = {}
        cli_codes = {}
        for machine_file in ("x86_64-h100-cu128.toml", "x86_64-gtx1080-cu128.toml"):
            profile = source / "examples" / "machines" / machine_file
            machine = tomllib.loads(profile.read_text())
            code, obj = wf.resolve({"configs": [str(cfg)], "index": str(farm), "machine": machine, "no_cache": True})
            cli = subprocess.run([args.wheelfit, "resolve", str(cfg), "--index", str(farm), "--machine", str(profile),
                                  "--json", "--no-cache"], capture_output=True, text=True)
            cli_obj = json.loads(cli.stdout)
            # The provenance names the profile file for the CLI and the request for the C API.
            for o in (obj, cli_obj):
                o.get("machine", {}).pop("provenance", None)
            cli_objects[machine_file] = cli_obj
            cli_codes[machine_file] = cli.returncode
            check(f"{machine_file}: the exit code is the CLI's", code == cli.returncode, f"{code} vs {cli.returncode}")
            check(f"{machine_file}: the object is the CLI's", obj == cli_obj,
                  json.dumps(obj, sort_keys=True)[:400] + "\n   vs " + json.dumps(cli_obj, sort_keys=True)[:400])

        # A fleet: the same two machines in one call, each object the single one with its name.
        fleet = [{"name": Path(f).stem, "machine": tomllib.loads((source / "examples" / "machines" / f).read_text())}
                 for f in cli_objects]
        code, obj = wf.resolve({"configs": [str(cfg)], "index": str(farm), "machines": fleet, "no_cache": True})
        per_machine = obj.get("machines", [])
        for o in per_machine:
            o.get("machine", {}).pop("provenance", None)
        check("machines: the worst exit code", code == max(cli_codes.values()), f"{code} vs {cli_codes}")
        check("machines: one object per machine, named, as the single resolves",
              [o.pop("name", None) for o in per_machine] == [m["name"] for m in fleet] and
              per_machine == list(cli_objects.values()), json.dumps(obj)[:400])
        check("machines: the summary", [(s["machine"], s["status"]) for s in obj.get("summary", [])] ==
              [(Path(f).stem, "resolved" if c == 0 else "unresolved") for f, c in cli_codes.items()],
              json.dumps(obj.get("summary")))

        h100 = tomllib.loads((source / "examples" / "machines" / "x86_64-h100-cu128.toml").read_text())
        code, obj = wf.resolve({"envs": [{"name": "direct", "python": "3.12", "packages": wanted}],
                                "index": str(farm), "machine": h100})
        check("envs given directly resolve", code == 0 and obj.get("combo") == {"cuda": "12.8", "torch": "2.8"},
              f"{code} {json.dumps(obj)[:300]}")
        check("envs given directly pick the same files",
              [p["filename"] for p in obj.get("packages", [])] ==
              [p["filename"] for p in cli_objects["x86_64-h100-cu128.toml"].get("packages", [])]
              if code == 0 else False, "")

        for name, request, want_code, want_text in [
            ("an unknown key is named", {"configs": [str(cfg)], "indx": "x"}, 2, "unknown key 'indx'"),
            ("a bad machine names the key", {"configs": [str(cfg)], "machine": {"glibc": 2.35}}, 2, "quote it"),
            ("a wrong type names the key", {"configs": [str(cfg)], "retries": "3"}, 2, "request.retries: expected an integer"),
            ("max_time out of range names the key", {"configs": [str(cfg)], "max_time": 0}, 2, "request.max_time: 0 is not in 1-86400"),
            ("speed_time out of range names the key", {"configs": [str(cfg)], "speed_time": 0}, 2, "request.speed_time: 0 is not in"),
            ("speed_limit must be an integer", {"configs": [str(cfg)], "speed_limit": "1k"}, 2,
             "request.speed_limit: expected an integer"),
            ("no environments", {"index": str(farm)}, 2, "give configs or envs"),
            ("machine and machines", {"configs": [str(cfg)], "machine": h100, "machines": [{"name": "a", "machine": h100}]},
             2, "machine and machines do not go together"),
            ("a fleet machine without a name", {"configs": [str(cfg)], "machines": [{"machine": h100}]}, 2,
             "request.machines[0]: give a name and a machine"),
            ("a trust store that cannot be loaded names the key and the file",
             {"configs": [str(cfg)], "machine": h100, "index": str(farm), "cert": str(Path(tmp) / "no-ca.pem")}, 2,
             "no-ca.pem (from request.cert) does not exist"),
            ("a client certificate that cannot be loaded names the key and the file",
             {"configs": [str(cfg)], "machine": h100, "index": str(farm), "client_cert": str(Path(tmp) / "me.pem")}, 2,
             "me.pem (from request.client_cert) does not exist"),
            ("a missing config", {"configs": [str(Path(tmp) / "none.toml")], "machine": h100}, 2, "none.toml"),
            ("a backend with no index: exit 3", {"configs": [str(cfg)], "machine": dict(h100, torch="2.7.1+rocm6.3",
                                                  backend="rocm", gpus=["gfx90a"])}, 3, "no ROCm wheel index is published"),
            # A NUL would cut the string on the C side ("/etc/passwd\0.toml" opens /etc/passwd): refused, wherever.
            ("a NUL in a config path names the key", {"configs": ["/etc/passwd\u0000.toml"], "machine": h100}, 2,
             "request.configs[0]: holds a NUL byte"),
            ("a NUL in the index names the key", {"configs": [str(cfg)], "machine": h100, "index": str(farm) + "\u0000/x"}, 2,
             "request.index: holds a NUL byte"),
            ("a NUL in an env's package names the key",
             {"envs": [{"name": "e", "python": "3.12", "packages": [wanted[0], "x\u0000"]}], "machine": h100}, 2,
             "request.envs[0].packages[1]: holds a NUL byte"),
            ("a NUL in a profile value names the key", {"configs": [str(cfg)], "machine": dict(h100, gpus=["9.0\u0000"])}, 2,
             "request.machine.gpus[0]: holds a NUL byte"),
            ("a NUL in a key", {"configs": [str(cfg)], "machine": h100, "index\u0000": "x"}, 2, "request: a key holds a NUL byte"),
            # An index folder the system cannot stat: the path and the system's error, exit 2 (never 70).
            ("an index under a symlink loop", {"configs": [str(cfg)], "machine": h100, "index": str(loop / "x")}, 2,
             "Too many levels of symbolic links"),
            ("an index name too long", {"configs": [str(cfg)], "machine": h100, "index": str(Path(tmp) / ("a" * 300))}, 2,
             "File name too long"),
            # The user agent goes into a header line as it is.
            ("a user_agent with a NUL", {"configs": [str(cfg)], "machine": h100, "index": str(farm), "user_agent": "wf\u0000x"}, 2,
             "request.user_agent: holds a NUL byte"),
            *[(f"a user_agent with control byte {c!r}",
               {"configs": [str(cfg)], "machine": h100, "index": str(farm), "user_agent": f"wf{c}x"}, 2,
               "request.user_agent: must be one non-empty line without control characters")
              for c in ("\r\nX-Evil: 1", "\t", "\x1b[2J", "\x7f", "\x01")],
        ]:
            code, obj = wf.resolve(request)
            message = obj.get("error", {}).get("message", "")
            check(name, code == want_code and want_text in message and obj["error"].get("exit_code") == want_code,
                  f"{code} {message}")
        # The low-speed rule and the whole call's bound are request keys (a local index: nothing to bound).
        code, obj = wf.resolve({"configs": [str(cfg)], "machine": h100, "index": str(farm), "no_cache": True,
                                "speed_limit": 0, "speed_time": 5, "max_time": 60})
        check("speed_limit, speed_time and max_time are request keys", code == 0, json.dumps(obj)[:300])

        # explain: a bare wheel name on the H100, as the CLI explains it.
        name = "flash_attn-2.8.3+cu128torch2.8-cp312-cp312-manylinux_2_28_x86_64.whl"
        code, obj = wf.explain({"wheel": name, "machine": h100})
        profile = str(source / "examples" / "machines" / "x86_64-h100-cu128.toml")
        cli = subprocess.run([args.wheelfit, "explain", name, "--machine", profile, "--json"], capture_output=True, text=True)
        check("explain is the CLI's", code == cli.returncode and obj == json.loads(cli.stdout),
              f"{code} {json.dumps(obj)[:300]}\n   vs {cli.returncode} {cli.stdout[:300]}")
        code, obj = wf.explain({"machine": h100})
        check("explain without a wheel", code == 2 and "request.wheel: missing" in obj["error"]["message"], json.dumps(obj))
        for what, request, want_text in [
            ("explain: jobs is not one of its keys", {"wheel": name, "machine": h100, "jobs": 4}, "unknown key 'jobs'"),
            ("explain: a NUL in the wheel names the key", {"wheel": "/etc/passwd\u0000" + name, "machine": h100},
             "request.wheel: holds a NUL byte"),
            ("explain: a user_agent with a control byte", {"wheel": name, "machine": h100, "user_agent": "wf\x1bx"},
             "request.user_agent: must be one non-empty line without control characters"),
        ]:
            code, obj = wf.explain(request)
            message = obj.get("error", {}).get("message", "")
            check(what, code == 2 and want_text in message and obj["error"].get("exit_code") == 2, f"{code} {message}")

        # detect: this machine, a valid profile for the other calls.
        code, obj = wf.detect({"python": sys.executable})
        check("detect answers with a profile", code == 0 and "provenance" in obj and "notes" in obj and obj.get("os"),
              json.dumps(obj)[:300])
        detected = {k: v for k, v in obj.items() if k not in ("provenance", "notes", "interpreter", "devices")}
        code, again = wf.resolve({"configs": [str(cfg)], "index": str(farm), "machine": detected, "no_cache": True})
        check("the detected profile is a valid machine", code in (0, 1) and "error" not in again, json.dumps(again)[:300])
        code, obj = wf.detect({"backend": "metal"})
        check("detect with an unknown backend", code == 2 and "unknown backend 'metal'" in obj["error"]["message"], json.dumps(obj))
        code, obj = wf.detect({"python": sys.executable + "\u0000 -c pass"})
        check("detect: a NUL in python names the key",
              code == 2 and "request.python: holds a NUL byte" in obj.get("error", {}).get("message", ""), json.dumps(obj))

        # doctor: this interpreter's site folders judged on the H100, as the CLI judges them.
        code, obj = wf.doctor({"python": sys.executable, "machine": h100})
        cli = subprocess.run([args.wheelfit, "doctor", "--python", sys.executable, "--machine", profile, "--json"],
                             capture_output=True, text=True)
        check("doctor is the CLI's", code == cli.returncode and code in (0, 1) and obj == json.loads(cli.stdout),
              f"{code} {json.dumps(obj)[:300]}\n   vs {cli.returncode} {cli.stdout[:300]}")
        code, obj = wf.doctor({"site": 3})
        check("doctor with a wrong type names the key", code == 2 and "request.site" in obj["error"]["message"], json.dumps(obj))

        cli_version = subprocess.run([args.wheelfit, "--version"], capture_output=True, text=True).stdout
        check("wheelfit_version is the CLI's", wf.version() in cli_version, f"{wf.version()!r} vs {cli_version!r}")

        nm = subprocess.run(["nm", "-D", "--defined-only", args.lib], capture_output=True, text=True)
        exported = sorted(line.split()[-1] for line in nm.stdout.splitlines() if line.split() and line.split()[-2] in "TtWwDdBbRrVviu")
        check("only wheelfit_* symbols are exported", nm.returncode == 0 and exported and
              all(s.startswith("wheelfit_") for s in exported), ", ".join(exported[:20]))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
