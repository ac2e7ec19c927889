# SPDX-License-Identifier: Apache-2.0
"""Closing: what an object that owns a C handle does with Python's
lifetime hooks (a with-block and garbage collection both call its close(),
which must be idempotent). Shared by Solver and Gravity."""


class Closing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
