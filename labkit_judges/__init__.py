"""The judge side of the course's exercises: references, test inputs, expected values, quiz keys.

One module per lesson (`lNN.py`), importing the learner-side declarations of
`labkit.exercises.lNN` and registering a judge for each (`labkit.checks.judging`). Only the
grader's verdict process and the learner's own notebook import this package; the grading
sandbox does not mount it, so a graded kernel cannot read an answer from it.
"""
