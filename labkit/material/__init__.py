"""Lesson material, one module per lesson (`lNN.py`, written by hand): what a notebook hands out and the
factories a graded kernel builds test inputs with. Learner side: never an answer or a test input."""
