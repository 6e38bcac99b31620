"""The translator's exception: what is wrong or unsupported, and where."""


class TypingError(TypeError):
    """A kernel written in Python uses something pygpu.cuda.jit cannot
    compile, or uses it wrongly; the message names the Python file, line and
    construct. `filename` and `lineno` say where (None where not known)."""

    def __init__(self, message, filename=None, lineno=None):
        super().__init__(message)
        self.filename = filename
        self.lineno = lineno
