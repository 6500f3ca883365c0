"""Replay a fuzz corpus through the same differential check as ``fuzz_decode.py``, without atheris.

Used to run the corpus against a native core built with a sanitizer (see README.md).
Prints the number of inputs checked; exits non-zero on the first disagreement.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import fuzz_decode  # noqa: E402  (atheris is imported, but its instrumentation is not started)


def main(folders):
    count = 0
    for folder in folders:
        for name in sorted(os.listdir(folder)):
            with open(os.path.join(folder, name), "rb") as f:
                fuzz_decode.test_one_input(f.read())
            count += 1
    print(f"{count} inputs: native and pure twins agree")


if __name__ == "__main__":
    main(sys.argv[1:])
