"""The one spec of each of the course's exercises: what the learner sees, references, test inputs,
expected values, quiz answers.

One module per lesson (`lNN.py`): `@exercise(...)` on each judge and `quiz(...)` for each quiz
(`labkit.checks.judging`); `labkit assign` writes the learner-visible part to `labkit/exercises/lNN.py`.
Only the grader's verdict process and the learner's own notebook import this package; the grading
sandbox does not mount it, so a graded kernel cannot read an answer from it.
"""
