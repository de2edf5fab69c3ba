"""labkit: the helper library of the ONNX Lab course.

Lessons import a few names from here; everything else lives in modules named for what they do
(`checks`, `assign`, `data`, `models`, `bench`, `doctor`, `viz`, `grading`, `android`).
References, judges and quiz keys are not here: they are in the separate `labkit_judges` package.
"""
from .bench import Timing, bench
from .checks import check, quiz_buttons
from .data import digits, normalize
from .doctor import doctor
from .quiet import quiet

__version__ = "0.1.0"
__all__ = ["bench", "Timing", "check", "quiz_buttons", "digits", "normalize", "doctor", "quiet", "__version__"]
