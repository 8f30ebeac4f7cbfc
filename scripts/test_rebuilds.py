#!/usr/bin/env python3
"""What `cargo test --workspace` compiles beyond `cargo build` (standard library only).

Reads the compiler-artifact messages of the two commands, run one after the other in one target
directory, and prints the units (a package's library, build script or test target, keyed by its
output file, whose name carries cargo's hash of the features) the tests add: the packages only
the tests need, and those the build had but compiles again with another feature set.

    cargo build --message-format=json > /tmp/build.json
    cargo test --workspace --no-run --message-format=json > /tmp/test.json
    python3 scripts/test_rebuilds.py /tmp/build.json /tmp/test.json
"""

import json
import os
import sys


def units(path):
    """(package, target name, built as a test, output files) of every artifact in `path`."""
    out = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("{"):
                continue
            m = json.loads(line)
            if m.get("reason") != "compiler-artifact":
                continue
            # `registry+...#name@1.0` or `path+file:///dir/name#0.1.0`.
            source, _, fragment = m["package_id"].rpartition("#")
            package = fragment.split("@")[0] if "@" in fragment else source.rsplit("/", 1)[-1]
            files = tuple(sorted(os.path.basename(p) for p in m.get("filenames", [])))
            out.add((package, m["target"]["name"], m["profile"]["test"], files))
    return out


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    build, test = units(sys.argv[1]), units(sys.argv[2])
    new = test - build
    built = {u[0] for u in build}
    packages = sorted({u[0] for u in new})
    again = [p for p in packages if p in built and not p.startswith("warpscope")]
    only = [p for p in packages if p not in built]
    binaries = sorted(f"{u[0]}:{u[1]}" for u in test if u[2])
    print(f"units: build {len(build)}, test {len(test)}, beyond the build {len(new)}")
    print(f"packages compiled by the tests beyond the build: {len(packages)}")
    print(f"  dependencies the build had, compiled again ({len(again)}): {', '.join(again)}")
    print(f"  packages only the tests need ({len(only)}): {', '.join(only)}")
    print(f"test binaries ({len(binaries)}): {', '.join(binaries)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
