"""The `labkit` command: assign, doctor, bench, run-solutions, clean, course-model, lesson-time, grade, release."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _assign(args) -> int:
    from .assign import AssignError, assign
    from .checks.registry import ExerciseModuleError

    try:
        problems = assign(check_only=args.check)
    except (AssignError, ExerciseModuleError, FileNotFoundError) as e:
        print(f"labkit assign: {e}", file=sys.stderr)
        return 2
    for p in problems:
        print(f"✘ {p}")
    if problems:
        print("Fix the headings named above; for stale files run `labkit assign` (or `make assign`) and commit "
              "labkit/exercises/ and lessons/." if args.check else "Fix the headings named above.")
        return 1
    print("labkit/exercises/ and lessons/ are up to date with labkit_judges/ and solutions/." if args.check
          else "Wrote labkit/exercises/ from labkit_judges/ and lessons/ from solutions/.")
    return 0


def _doctor(args) -> int:
    from .doctor import main

    return main()


def _solutions(args) -> list[Path]:
    from .fsutil import course_root

    root = course_root()
    paths = sorted((root / "solutions").glob("*.ipynb"))
    if args.lessons:
        paths = [p for p in paths if any(p.name.startswith(x) for x in args.lessons)]
    return paths


def _bench(args) -> int:
    from .notebooks import BUDGET_MB, BUDGET_SECONDS, measure

    print(f"{'lesson':<24} {'seconds':>8} {'peak MB':>8} {'points':>9}  budget (≤{BUDGET_SECONDS} s, ≤{BUDGET_MB} MB)")
    worst = 0
    for path in _solutions(args):
        m = measure(path)
        ok = m["seconds"] <= BUDGET_SECONDS and m["peak_mb"] <= BUDGET_MB and "error" not in m
        worst |= not ok
        pts = f"{m['points']:g}/{m['max_points']:g}"
        print(f"{path.stem:<24} {m['seconds']:>8.1f} {m['peak_mb']:>8.0f} {pts:>9}  {'ok' if ok else 'OVER BUDGET'}"
              + (f"  error: {m['error']}" if "error" in m else ""), flush=True)
    return 1 if worst else 0


def _run_solutions(args) -> int:
    from .clean import clean_file
    from .notebooks import execute

    for path in _solutions(args):
        print(f"executing {path.name} ...", flush=True)
        execute(path, out=path)
        clean_file(path)  # a re-run diffs only where outputs changed (no widget state, no run metadata)
    print("Done: review the outputs, then run `labkit assign`.")
    return 0


def _course_model(args) -> int:
    if args.transformer:
        from . import transformer

        steps = args.steps or transformer.STEPS
        print(f"Training the course transformer ({steps} steps, one thread; several minutes)...", flush=True)
        sha, ppl = transformer.write_course_model(steps=steps)
        print(f"Wrote {transformer.WEIGHTS_FILE} (held-out perplexity {ppl:.3f}); SHA-256 {sha} recorded in "
              "labkit/transformer.py.")
        print("Now refresh lesson 09's committed outputs: labkit run-solutions 09 && labkit assign.")
        return 0
    from .models import EPOCHS, WEIGHTS_FILE, write_course_model

    epochs = args.epochs or EPOCHS
    print(f"Training the course CNN ({epochs} epochs, one thread)...", flush=True)
    sha, acc = write_course_model(epochs=epochs)
    print(f"Wrote {WEIGHTS_FILE} (test accuracy {acc:.2%}); SHA-256 {sha} recorded in labkit/models.py.")
    print("Now refresh every committed output that shows the model's numbers: make solutions && make assign.")
    return 0


def _lesson_time(args) -> int:
    from .lesson_time import lesson_time, problems, write

    if args.check and args.write:
        print("labkit lesson-time: use --check or --write, not both", file=sys.stderr)
        return 2
    bad = 0
    for path in _solutions(args):
        t = lesson_time(path)
        if args.write and write(path):
            print(f"stamped {path.name}: {t.line}")
        elif not args.check:
            split = f" ({' + '.join(f'{s:.1f}' for s in t.sittings)})" if t.sittings else ""
            print(f"{path.stem:<24} core {t.core_exact:5.1f} → {t.core:3d} min{split}   "
                  f"optional {t.optional_exact:5.1f} → {t.optional:3d} min")
        if args.check or args.write:
            for p in problems(path):
                print(f"✘ {p}")
                bad = 1
    if args.check and not bad:
        print("Every time line matches the rule and every sitting fits 60 minutes.")
    return bad


def _release(args) -> int:
    from .edition import ReleaseError, build

    try:
        build(Path(args.out), args.lessons)
    except (ReleaseError, FileNotFoundError) as e:
        print(f"labkit release: {e}", file=sys.stderr)
        return 2
    return 0


#: modules a graded release leaves out (labkit/edition.py): their commands say so in one line
INSTRUCTOR_ONLY = ("labkit.grading", "labkit.assign", "labkit.edition", "labkit.lesson_time", "labkit_judges")


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except ModuleNotFoundError as e:
        if not (e.name or "").startswith(INSTRUCTOR_ONLY):
            raise
        print("labkit: this is the learner's install of a graded release; this command is for instructors "
              "(run it from the course repository).", file=sys.stderr)
        return 2


def _main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["grades"]:  # after grading: export, report, feedback, override
        from .grading.instructor import main as grades

        return grades(argv[1:])
    if argv[:1] == ["clean"]:  # labkit clean [--check] [PATH...]
        from .clean import main as clean

        return clean(argv[1:])
    if argv[:1] == ["grade"]:  # the grader parses its own options (--jobs, --out, ...)
        from .grading import main as grade

        return grade(argv[1:])
    parser = argparse.ArgumentParser(prog="labkit", description="ONNX Lab course tools")
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("assign", help="write labkit/exercises/ from labkit_judges/ and lessons/ from solutions/")
    p.add_argument("--check", action="store_true",
                   help="only compare; exit 1 when labkit/exercises/ or lessons/ is stale or a solution heading is wrong")
    p.set_defaults(fn=_assign)
    sub.add_parser("doctor", help="check this machine for the course").set_defaults(fn=_doctor)
    p = sub.add_parser("bench", help="execute every solution notebook: seconds and peak memory")
    p.add_argument("lessons", nargs="*", help="lesson numbers (default: all)")
    p.set_defaults(fn=_bench)
    p = sub.add_parser("run-solutions", help="re-execute solution notebooks in place (refresh outputs)")
    p.add_argument("lessons", nargs="*", help="lesson numbers (default: all)")
    p.set_defaults(fn=_run_solutions)
    p = sub.add_parser("course-model", help="maintainers: retrain the shipped course CNN (or --transformer) and record its SHA-256")
    p.add_argument("--epochs", type=int, default=None, help="training epochs (default: as shipped)")
    p.add_argument("--transformer", action="store_true", help="retrain lesson 09's transformer instead of the CNN")
    p.add_argument("--steps", type=int, default=None, help="transformer training steps (default: as shipped)")
    p.set_defaults(fn=_course_model)
    p = sub.add_parser("lesson-time", help="learner minutes per lesson by the rule (labkit/lesson_time.py)")
    p.add_argument("lessons", nargs="*", help="lesson numbers (default: all)")
    p.add_argument("--check", action="store_true", help="exit 1 if a time line is missing or stale, or a sitting is over 60 min")
    p.add_argument("--write", action="store_true", help="stamp the time line into each solution's first markdown cell")
    p.set_defaults(fn=_lesson_time)
    p = sub.add_parser("release", help="write the graded release for learners: lessons and a learner install "
                       "with public checks, no solution, judge or quiz key (docs/instructors.md)")
    p.add_argument("out", help="a new folder")
    p.add_argument("--lessons", nargs="+", default=None, help="lesson numbers (default: all)")
    p.set_defaults(fn=_release)
    sub.add_parser("clean", help="strip widget state and run metadata from notebooks (labkit clean --help)",
                   add_help=False)
    sub.add_parser("grade", help="grade a class's submissions (labkit grade --help)", add_help=False)
    sub.add_parser("grades", help="export, report, return feedback, override (labkit grades --help)", add_help=False)
    args = parser.parse_args(argv)
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
