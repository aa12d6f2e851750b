"""The puzzle exercises' checker (chapters 13-15): it says whether an answer is right,
never what the answer is.

The source of the copies in the notebooks: edit here, then run `make sync`.
"""


def puzzle_feedback(answer, is_right):
    """Print whether `answer` is right (`is_right(answer)`), or that none is set yet."""
    if answer is None:
        print("no answer yet: fill it in and run this cell again")
    else:
        print("right!" if is_right(answer) else "not yet: try again")
