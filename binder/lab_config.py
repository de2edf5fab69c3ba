"""Install the course's JupyterLab setup into a Python environment (`make lab`'s install, binder/postBuild).

Run from the repository root with the environment's Python: `python binder/lab_config.py [PREFIX]`
(PREFIX defaults to sys.prefix). It writes, under PREFIX:

- etc/jupyter/jupyter_server_config.json: binder/jupyter_server_config.json merged into what is there
  (one kernel in the Launcher, encrypted kernels, custom CSS on), and the folder JupyterLab serves
  custom/custom.css from: etc/jupyter/custom (a server option; by default it would be the user's
  ~/.jupyter/custom, shared by every JupyterLab the user runs);
- etc/jupyter/custom/custom.css: binder/custom.css (a narrower left panel);
- share/jupyter/lab/settings/overrides.json: binder/overrides.json (JupyterLab's default settings:
  no news pop-ups, a 12 px code font, a compact layout).
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

BINDER = Path(__file__).resolve().parent


def install(prefix: Path) -> None:
    etc = prefix / "etc" / "jupyter"
    custom = etc / "custom"
    custom.mkdir(parents=True, exist_ok=True)
    shutil.copy(BINDER / "custom.css", custom / "custom.css")

    path = etc / "jupyter_server_config.json"
    config = json.loads(path.read_text()) if path.exists() else {}
    for section, values in json.loads((BINDER / "jupyter_server_config.json").read_text()).items():
        config.setdefault(section, {}).update(values)
    tornado = config.setdefault("ServerApp", {}).setdefault("tornado_settings", {})
    tornado["static_custom_path"] = [str(custom)]
    path.write_text(json.dumps(config, indent=2) + "\n")

    settings = prefix / "share" / "jupyter" / "lab" / "settings"
    settings.mkdir(parents=True, exist_ok=True)
    shutil.copy(BINDER / "overrides.json", settings / "overrides.json")


if __name__ == "__main__":
    install(Path(sys.argv[1] if len(sys.argv) > 1 else sys.prefix).resolve())
