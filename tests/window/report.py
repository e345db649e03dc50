# SPDX-License-Identifier: GPL-3.0-or-later
"""The windowed run's result: the driver's checks (results.json) and Blender's console
(blender.log, no Python traceback and no warning or error from the extension), one line each,
then "N passed, N failed". Exits 1 on any failure. Usage: python3 report.py <run folder>."""

import json
import pathlib
import re
import sys

folder = pathlib.Path(sys.argv[1])
checks = []
try:
    data = json.loads((folder / "results.json").read_text())
    checks = data["checks"]
    print(f"Blender {data['blender']}")
except (OSError, ValueError, KeyError) as error:
    checks.append({"name": "the driver wrote its results", "ok": False, "detail": str(error)})

log = (folder / "blender.log").read_text(errors="replace") if (folder / "blender.log").exists() else ""
lines = log.splitlines()
bad = []
for number, line in enumerate(lines):
    if line.startswith("[window]"):
        continue
    ours = "two_bone_ik" in line or "Two-Bone IK" in line
    if line.startswith("Traceback") or (ours and re.search(r"warning|error|exception", line, re.I)):
        bad.append("\n".join(lines[number : number + 12]))
checks.append(
    {
        "name": "Blender's console: no Python traceback, no warning or error from the extension",
        "ok": not bad,
        "detail": "\n---\n".join(bad),
    }
)

failed = [check for check in checks if not check["ok"]]
for check in checks:
    print(("PASSED " if check["ok"] else "FAILED ") + check["name"])
for check in failed:
    print(f"\n--- FAILED {check['name']}\n{check['detail']}".rstrip())
print(f"\n{len(checks) - len(failed)} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)
