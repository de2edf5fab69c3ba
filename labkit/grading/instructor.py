"""`labkit grades export|report|feedback|override DIR...`: the instructor's week after grading,
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
    e.add_argument("--roster", help="CSV: student (as graded), id, name, login/email [, section, id_number]")
    e.add_argument("--moodle-key", choices=("email", "idnumber"), default="email",
                   help="how Moodle matches learners (default: email address)")
    e.add_argument("--out", help="file to write (a folder for gradescope); default: in the first run's folder")
    r = sub.add_parser("report", help="an HTML class report: distribution, pass rates, common mistakes")
    r.add_argument("run", help="output folder of `labkit grade`")
    r.add_argument("--out", help="HTML file (default: DIR/report.html)")
    f = sub.add_parser("feedback", help="each learner's notebook back, with a feedback cell under each exercise")
    f.add_argument("run", help="output folder of `labkit grade`")
    f.add_argument("--out", required=True, help="folder to write <student>/ folders into")
    o = sub.add_parser("override", help="set one learner's points for one exercise, with a reason")
    o.add_argument("run", help="output folder of `labkit grade`")
    o.add_argument("student")
    o.add_argument("exercise")
    o.add_argument("points", type=float)
    o.add_argument("--reason", required=True, help="why (the learner sees it in their feedback)")
    return p


_DEFAULT_NAMES = {"canvas": "canvas.csv", "moodle": "moodle.csv", "csv": "grades-wide.csv", "gradescope": "gradescope"}


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        if args.cmd == "export":
            runs = [load_run(d) for d in args.runs]
            roster = read_roster(args.roster) if args.roster else None
            out = Path(args.out) if args.out else runs[0].folder / _DEFAULT_NAMES[args.to]
            print(export(runs, args.to, out, roster, args.moodle_key))
        elif args.cmd == "report":
            from .class_report import write_report

            run = load_run(args.run)
            print(f"Wrote {write_report(run, Path(args.out) if args.out else None)}")
        elif args.cmd == "feedback":
            from .release import release

            run = load_run(args.run)
            n, notes = release(run, Path(args.out))
            print(f"Wrote feedback for {n} learners under {args.out} (one folder each: their notebook with "
                  "feedback cells, and feedback.html).")
            for note in notes:
                print("  " + note, file=sys.stderr)
        else:
            o = add_override(args.run, args.student, args.exercise, args.points, args.reason)
            print(f"Override recorded in {Path(args.run) / 'overrides.csv'}: {o.student} {o.exercise} -> "
                  f"{o.points:g} points ({o.reason}). Exports, the report and feedback apply it.")
    except ResultsError as e:
        print(f"labkit grades: {e}", file=sys.stderr)
        return 2
    return 0
