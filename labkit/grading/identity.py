"""Who handed a file in: a learner identity derived from who they are, never from the order of files.

Sources, strongest first:

* **Canvas** "Download submissions": `lastnamefirstname_[late_]<user id>_<submission id>_<original name>`
  (a resubmission's original name gets `-1`, `-2` … before its extension).
* **Moodle** "Download all submissions": a folder (or a file-name prefix)
  `Full Name_<participant id>_assignsubmission_file_`.
* **Gradescope** "Export submissions": `submission_<id>/` folders next to `submission_metadata.yml`,
  whose `:submitters:` list gives each submission's `:name:`, `:sid:` and `:email:`.
* the **file name** (or `<learner>/<lesson>.ipynb`), with copy suffixes such as ` (1)` and a lesson
  name or number removed;
* the notebook's **metadata** (`metadata.labkit.student`) only when neither names anyone. Metadata
  never overrides another source; a disagreement is reported. A metadata identity lives in its own
  namespace, so a file can never take or blur another learner's rows by claiming their name.

Display names keep their Unicode (NFC). The folder id under `DIR/students/` is the file name itself
when that is already a plain lowercase id (`alice.ipynb` -> `alice`), otherwise an ASCII slug of the
name plus a short hash of the identity key (`zoe-muller-1a2b3c4d`, `learner-5e6f7a8b` for a name with
no Latin letters): safe on every file system, the same on every run, and unique whatever other files
are added or removed.
"""
from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path

MAX_NAME = 120
SLUG_LEN = 40
HASH_LEN = 8

CANVAS = re.compile(r"^(?P<name>[^\W_]+)_(?:(?P<late>late|LATE)_)?(?P<uid>\d+)_(?P<sid>\d+)_(?P<orig>.+)$")
#: Moodle's folder `Full Name_<pid>_assignsubmission_file_`: the marker at the end (a full name that
#: contains the marker cannot move it), and its flat file-name form (the marker exactly once: the
#: learner's own file name after it could contain another)
MOODLE_DIR = re.compile(r"^(?P<name>.+)_(?P<pid>\d+)_assignsubmission_(?:file|onlinetext)_?$")
MOODLE = re.compile(r"^(?P<name>.+?)_(?P<pid>\d+)_assignsubmission_(?:file|onlinetext)_(?P<orig>.*)$")
MOODLE_MARK = re.compile(r"_\d+_assignsubmission_(?:file|onlinetext)_")
GRADESCOPE_DIR = re.compile(r"^submission_(?P<id>\d+)$")
PLAIN = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
HASHED = re.compile(r"-[0-9a-f]{%d}$" % HASH_LEN)
RESUBMISSION = re.compile(r"-(\d+)$")
COPY_SUFFIX = re.compile(r"\s*(\(\d+\)|copy( \d+)?|kopie|-\s*copy)$", re.IGNORECASE)
LESSON_WORD = re.compile(r"[\s_.-]*[-–—]?\s*(lesson|lab|notebook|nb|assignment|hw)[\s_.-]*\d+[a-z]?$", re.IGNORECASE)


@dataclass
class Identity:
    """One learner, as far as one file tells."""

    key: str                    # "canvas:1234", "moodle:88", "gradescope:sid:42", "file:zoë müller", "metadata:bob"
    name: str                   # display name (NFC)
    source: str                 # canvas | moodle | gradescope | file | metadata
    platform_id: str = ""       # Canvas user id, Moodle participant id, Gradescope submission's sid
    email: str = ""
    timestamp: float | None = None   # the platform's submission time, when it gives one
    order: int = 0              # Canvas resubmission counter (-1, -2 …): later is larger
    late: bool = False
    notes: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        if self.source == "file" and PLAIN.fullmatch(self.key[5:]) and not HASHED.search(self.key):
            return self.key[5:]  # `alice.ipynb` -> `alice`: already safe, and unique among file names
        return learner_id(self.key, self.name)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["id"] = self.id
        return d


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", " ".join(str(text).split()))[:MAX_NAME]


def fold(text: str) -> str:
    """The form two spellings of one name compare equal in (NFC, case-folded, spaces collapsed)."""
    return nfc(text).casefold()


def slug(text: str) -> str:
    """An ASCII, folder-safe rendering of a name (accents dropped; may be empty for non-Latin names)."""
    ascii_ = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^A-Za-z0-9]+", "-", ascii_).strip("-").lower()[:SLUG_LEN]


def learner_id(key: str, name: str) -> str:
    """Folder id: slug of the name + hash of the identity key (stable, unique, safe)."""
    h = hashlib.sha256(key.encode("utf-8")).hexdigest()[:HASH_LEN]
    s = slug(name)
    return f"{s}-{h}" if s else f"learner-{h}"


# ------------------------------------------------------------------ Gradescope's submission_metadata.yml


def _yaml_scalar(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        inner = text[1:-1]
        if text[0] == "'":
            return inner.replace("''", "'")
        inner = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), inner)
        return inner.replace('\\"', '"').replace("\\\\", "\\")
    return text


def parse_gradescope_metadata(text: str) -> dict[str, dict]:
    """{"submission_123": {"submitters": [{"name", "sid", "email"}], "created_at": str}} from the
    export's `submission_metadata.yml` (the small YAML subset Gradescope writes; no YAML library)."""
    out: dict[str, dict] = {}
    current: dict | None = None
    person: dict | None = None
    in_submitters = False
    for raw in text.splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        line = raw.strip()
        if indent == 0 and line.endswith(":"):
            current = out.setdefault(line[:-1].strip().strip("'\""), {"submitters": []})
            in_submitters, person = False, None
            continue
        if current is None:
            continue
        m = re.match(r"^(- )?:?([A-Za-z_]+):\s*(.*)$", line)
        if not m:
            continue
        dash, key, value = m.group(1), m.group(2), _yaml_scalar(m.group(3))
        if key == "submitters" and not dash:
            in_submitters, person = True, None
        elif not dash and indent <= 2:
            in_submitters, person = False, None
            current[key] = value
        elif in_submitters:
            if dash:
                person = {}
                current["submitters"].append(person)
            if person is not None:
                person[key] = value
    return out


_GS_CACHE: dict[str, dict[str, dict]] = {}


def _gradescope_lookup(path: Path) -> tuple[dict, str] | None:
    """The metadata entry of the `submission_<id>` folder `path` lies in, if its export has one."""
    for parent in list(path.parents)[:4]:
        if GRADESCOPE_DIR.match(parent.name):
            meta = parent.parent / "submission_metadata.yml"
            key = os.path.abspath(meta)
            if key not in _GS_CACHE:
                try:
                    st = os.lstat(meta)
                    if not os.path.isfile(meta) or os.path.islink(meta) or st.st_size > 16 << 20:
                        raise OSError
                    _GS_CACHE[key] = parse_gradescope_metadata(meta.read_text(encoding="utf-8", errors="replace"))
                except OSError:
                    _GS_CACHE[key] = {}
            entry = _GS_CACHE[key].get(parent.name)
            return (entry, parent.name) if entry else None
    return None


def _timestamp(text: str) -> float | None:
    import datetime as dt

    m = re.match(r"(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d)(?:\.\d+)?\s*(Z|UTC|[+-]\d\d:?\d\d)?", text.strip())
    if not m:
        return None
    zone = (m.group(3) or "+00:00").replace("UTC", "+00:00").replace("Z", "+00:00")
    zone = zone if ":" in zone else zone[:3] + ":" + zone[3:]
    try:
        return dt.datetime.fromisoformat(f"{m.group(1)}T{m.group(2)}{zone}").timestamp()
    except ValueError:
        return None


# ------------------------------------------------------------------ file names


def name_from_file(path: Path, lesson_names: tuple[str, ...] = (), roots: tuple[str, ...] = ()) -> str:
    """A learner's name from a plain file name: `Smith, Anna - lesson03 (1).ipynb` -> `Smith, Anna`.

    `<learner>/<lesson>.ipynb` gives the folder's name (not when that folder is one the instructor
    named on the command line, `roots`). Empty when the name is only the lesson's."""
    stem = nfc(path.stem)
    folded = {fold(n) for n in lesson_names if n}
    if fold(stem) in folded or fold(COPY_SUFFIX.sub("", stem)) in folded:
        given = os.path.abspath(path.parent) in roots or path.parent.name in ("", ".", "/")
        stem = "" if given else nfc(path.parent.name)
    for _ in range(3):
        before = stem
        stem = COPY_SUFFIX.sub("", stem).strip()
        for n in lesson_names:
            if n and fold(stem).endswith(fold(n)) and len(stem) > len(n):
                stem = stem[: len(stem) - len(n)]
        stem = LESSON_WORD.sub("", stem).strip(" _-–—.,")
        if stem == before:
            break
    return nfc(stem)


def from_path(path: Path, lesson_names: tuple[str, ...] = (), roots: tuple[str, ...] = ()) -> Identity | None:
    """The identity a file's path carries (platform naming first), or None."""
    name = path.name
    gs = _gradescope_lookup(path)
    if gs is not None:
        entry, folder = gs
        people = [p for p in entry.get("submitters", []) if p.get("sid") or p.get("email") or p.get("name")]
        if people:
            p = people[0]
            key = (f"gradescope:sid:{p['sid']}" if p.get("sid") else
                   f"gradescope:email:{fold(p['email'])}" if p.get("email") else f"gradescope:name:{fold(p['name'])}")
            ident = Identity(key, nfc(p.get("name") or p.get("email") or p.get("sid")), "gradescope",
                             p.get("sid", ""), p.get("email", ""), _timestamp(entry.get("created_at", "")))
            if len(people) > 1:
                ident.notes.append(f"a group submission ({folder}): graded for its first submitter "
                                   f"{ident.name}; also: {', '.join(nfc(q.get('name', '?')) for q in people[1:])}")
            return ident
    m = MOODLE_DIR.match(path.parent.name) or _moodle_file(name)
    if m:
        return Identity(f"moodle:{m['pid']}", nfc(m["name"]), "moodle", m["pid"])
    m = CANVAS.match(name)
    if m and not re.fullmatch(r"\d+", m["name"]):
        orig_stem = Path(m["orig"]).stem
        r = RESUBMISSION.search(orig_stem)
        return Identity(f"canvas:{m['uid']}", nfc(m["name"]), "canvas", m["uid"], order=int(r.group(1)) if r else 0,
                        late=bool(m["late"]))
    who = name_from_file(path, lesson_names, roots)
    if who:
        return Identity(f"file:{fold(who)}", who, "file")
    return None


def _moodle_file(name: str) -> re.Match | None:
    """A Moodle file name `Full Name_<pid>_assignsubmission_file_<original>`, unless Canvas's own prefix
    (`name_<uid>_<sid>_`) comes first and the marker lies in the learner's original name after it, or
    the marker appears more than once (which one is Moodle's cannot be told)."""
    m = MOODLE.match(name)
    if m is None or len(MOODLE_MARK.findall(name)) != 1:
        return None
    c = CANVAS.match(name)
    if c and not re.fullmatch(r"\d+", c["name"]) and m.start("pid") >= c.start("orig"):
        return None  # a Canvas upload whose original file name holds the marker
    return m


def from_metadata(nb: dict | None) -> str:
    """The learner name a notebook's metadata claims (`metadata.labkit.student`), or ''."""
    meta = nb.get("metadata") if isinstance(nb, dict) and isinstance(nb.get("metadata"), dict) else {}
    lab = meta.get("labkit") if isinstance(meta.get("labkit"), dict) else {}
    who = lab.get("student")
    return nfc(who) if isinstance(who, str) and who.strip() else ""


def identify(path: Path, nb: dict | None, lesson_names: tuple[str, ...] = (), roots: tuple[str, ...] = ()) -> Identity:
    """The identity of one file: its path's, else its metadata's, else the file itself (never empty)."""
    ident = from_path(path, lesson_names, roots)
    claimed = from_metadata(nb)
    if ident is not None:
        if claimed and fold(claimed) != fold(ident.name) and ident.source == "file":
            ident.notes.append(f"the notebook's metadata says {claimed!r}; the file name {ident.name!r} is used")
        elif claimed and ident.source != "file" and fold(claimed) != fold(ident.name):
            ident.notes.append(f"the notebook's metadata says {claimed!r}; the {ident.source} identity is used")
        return ident
    if claimed:
        return Identity(f"metadata:{fold(claimed)}", claimed, "metadata",
                        notes=[f"named only by its notebook metadata ({claimed!r})"])
    h = hashlib.sha256(os.path.abspath(path).encode()).hexdigest()[:12]
    return Identity(f"path:{h}", nfc(path.name), "path", notes=["no learner name in the file name or metadata"])


# ------------------------------------------------------------------ one learner, several files


@dataclass
class Resolution:
    """Which file of each learner is graded; which are set aside; what was noticed."""

    graded: dict[str, int]                       # learner id -> index of the file graded
    superseded: dict[str, list[int]]             # learner id -> indices of that learner's older files
    notes: list[str]


def pick_latest(idents: list[Identity], paths: list[Path]) -> Resolution:
    """Group files by identity; per learner the latest notebook (platform time, Canvas resubmission counter,
    else modification time) is graded and the others listed. Never depends on the order given."""
    groups: dict[str, list[int]] = {}
    for i, ident in enumerate(idents):
        groups.setdefault(ident.id, []).append(i)

    def when(i: int) -> tuple:
        try:
            mtime = os.lstat(paths[i]).st_mtime
        except OSError:
            mtime = 0.0
        t = idents[i].timestamp  # a notebook over anything else (Moodle's onlinetext.html, a stray .pdf), then
        notebook = paths[i].suffix.lower() == ".ipynb"  # the platform's time, its resubmission counter, the file's time
        return (notebook, t if t is not None else float("-inf"), idents[i].order, mtime, str(paths[i]))

    graded, superseded, notes = {}, {}, []
    names: dict[str, set[str]] = {}
    for lid, members in sorted(groups.items()):
        members = sorted(members, key=when)
        graded[lid] = members[-1]
        if len(members) > 1:
            superseded[lid] = members[:-1]
            notes.append(f"{idents[members[-1]].name}: {len(members)} files; graded the latest, "
                         f"{paths[members[-1]].name}; not graded: " + ", ".join(paths[i].name for i in members[:-1]))
        names.setdefault(fold(idents[members[-1]].name), set()).add(lid)
    by_fold: dict[str, list[str]] = {}
    for lid, i in graded.items():
        by_fold.setdefault(fold(idents[i].name), []).append(lid)
    for name, lids in sorted(by_fold.items()):
        sources = sorted({idents[graded[l]].source for l in lids})
        if len(lids) > 1:
            notes.append(f"{len(lids)} different learners are called {idents[graded[lids[0]]].name!r} "
                         f"({', '.join(sources)}): graded separately as {', '.join(sorted(lids))}")
    for lid, i in graded.items():
        for n in idents[i].notes:
            notes.append(f"{idents[i].name} ({paths[i].name}): {n}")
    return Resolution(graded, superseded, notes)
