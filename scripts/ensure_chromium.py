"""Install Debian's chromium for the browser tests when it is missing (root only; never downloads a browser build)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys


def main() -> int:
    if shutil.which("chromium") or os.path.exists("/usr/bin/chromium"):
        return 0
    if os.environ.get("BOT_SKIP_BROWSER_INSTALL"):
        print("chromium missing; browser tests will be skipped (BOT_SKIP_BROWSER_INSTALL set)")
        return 0
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        print("chromium missing and apt-get unavailable: browser tests will be skipped", file=sys.stderr)
        return 0
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    print("installing Debian's chromium for the browser tests ...", flush=True)
    subprocess.run(["apt-get", "update", "-qq"], check=False, env=env)
    done = subprocess.run(
        # a CJK font too, so screenshots of the Chinese page show its text
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium", "fonts-wqy-zenhei"],
        check=False, env=env,
    )
    if done.returncode != 0 or not os.path.exists("/usr/bin/chromium"):
        # Not fatal: the browser test then skips and says why; every other test still runs.
        print(f"apt-get could not install chromium (exit {done.returncode}): browser tests will be skipped", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
