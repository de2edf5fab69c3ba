"""`labkit grades export|report|feedback|override|merge DIR...`: the instructor's week after grading,
read from the grader's outputs (nothing is graded again)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .exports import FORMATS, export, read_roster
from .results import ResultsError, add_override, load_run


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="labkit grades", description="After `labkit grade`: export, report, "
                                "return feedback, override (docs/instructors.md).")
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export", help="grades for a learning platform or a spreadsheet")
    e.add_argument("runs", nargs="+", help="output folders of `labkit grade` (one per lesson)")
    e.add_argument("--to", required=True, choices=FORMATS)
    e.add_argument("--roster", help="the platform's roster export (Canvas gradebook CSV; Moodle participants, grades "
                   "or grading worksheet) or a CSV with some of: student (as graded), name, id, email, login, id_number")
    e.add_argument("--canvas-column", action="append", default=[], metavar="'TITLE (ID)'",
                   help="the Canvas assignment's column header as Canvas exports it, one per lesson in folder order "
                        "(default: found in a Canvas roster by lesson name, else a new assignment)")
    e.add_argument("--moodle-key", choices=("email", "idnumber"), default="email",
                   help="how Moodle matches learners (default: email address)")
    e.add_argument("--out", help="file to write (a folder for gradescope); default: in the first run's folder")
    r = sub.add_parser("report", help="an HTML class report: distribution, pass rates, common mistakes")
    r.add_argument("run", help="output folder of `labkit grade`")
    r.add_argument("--out", help="HTML file (default: DIR/report.html)")
    r.add_argument("--roster", help="the class roster (as for export): the report lists who handed nothing in")
    f = sub.add_parser("feedback", help="each learner's notebook back, with a feedback cell under each exercise")
    f.add_argument("run", help="output folder of `labkit grade`")
    f.add_argument("--out", required=True, help="folder to write <student>/ folders into")
    g = sub.add_parser("gradescope-autograder", help="a Gradescope autograder zip that grades LESSON with this grader")
    g.add_argument("lesson", help="lesson number (00, 09b) or name")
    g.add_argument("--out", required=True, help="the zip to write (upload it as the assignment's autograder)")
    g.add_argument("--solutions", default=None, help="folder of solution notebooks (default: the course's)")
    o = sub.add_parser("override", help="set one learner's points for one exercise, with a reason")
    o.add_argument("run", help="output folder of `labkit grade`")
    o.add_argument("student")
    o.add_argument("exercise")
    o.add_argument("points", type=float)
    o.add_argument("--reason", required=True, help="why (the learner sees it in their feedback)")
    m = sub.add_parser("merge", help="join the folders of `labkit grade --shard I/N` into one run")
    m.add_argument("out", help="the merged output folder (new or empty)")
    m.add_argument("shards", nargs="+", help="the shards' output folders (all N of them)")
    return p


_DEFAULT_NAMES = {"canvas": "canvas.csv", "moodle": "moodle.csv", "csv": "grades-wide.csv", "gradescope": "gradescope"}


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        if args.cmd == "export":
            runs = [load_run(d) for d in args.runs]
            roster = read_roster(args.roster) if args.roster else None
            out = Path(args.out) if args.out else runs[0].folder / _DEFAULT_NAMES[args.to]
            print(export(runs, args.to, out, roster, args.moodle_key, args.canvas_column))
        elif args.cmd == "gradescope-autograder":
            from .gradescope import build_bundle
            from .options import GradeError

            try:
                path = build_bundle(args.lesson, Path(args.out), Path(args.solutions) if args.solutions else None)
            except GradeError as e:
                raise ResultsError(str(e)) from None
            print(f"Wrote {path}: upload it as the Gradescope assignment's autograder (docs/instructors.md). "
                  "Learners upload their notebook; Gradescope shows their score and one test per exercise.")
        elif args.cmd == "report":
            from .class_report import write_report

            run = load_run(args.run)
            roster = read_roster(args.roster) if args.roster else None
            print(f"Wrote {write_report(run, Path(args.out) if args.out else None, roster)}")
        elif args.cmd == "merge":
            from .shards import merge

            print(merge(Path(args.out), [Path(d) for d in args.shards]))
        elif args.cmd == "feedback":
            from .release import release

            run = load_run(args.run)
            n, notes = release(run, Path(args.out))
            for note in notes:
                print("  " + note, file=sys.stderr)
            returned = n - sum(": notebook not returned" in x for x in notes)
            if not n:
                print(f"labkit grades: no feedback written: {args.run} has no learners in its latest grading",
                      file=sys.stderr)
                return 1
            print(f"Wrote feedback for {n} learners under {args.out} ({returned} with their notebook annotated, "
                  "all with feedback.html).")
            if not returned:
                print("labkit grades: no learner's notebook could be read back (see above): only feedback.html "
                      "was written", file=sys.stderr)
                return 1
        else:
            from .reports import write_grades

            o = add_override(args.run, args.student, args.exercise, args.points, args.reason)
            write_grades(Path(args.run))  # its one writer, from the records on disk, the override applied
            print(f"Override recorded in {Path(args.run) / 'overrides.csv'}: {o.student} {o.exercise} -> "
                  f"{o.points:g} points ({o.reason}). grades.csv, exports, the report and feedback apply it.")
    except ResultsError as e:
        print(f"labkit grades: {e}", file=sys.stderr)
        return 2
    return 0
