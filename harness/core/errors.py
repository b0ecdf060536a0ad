"""Errors that mean "bad usage or bad input": exit status 2, one line, no traceback."""


class UsageError(Exception):
    """Raised for anything the user must fix (bad SPEC, unknown graph, unwritable folder).

    The CLI prints ``passgate: error: <message>`` on stderr and exits 2. The
    message must fit on one line and name the thing that was not found.
    """

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))
