"""Testing tools built on strop's public API: the differential fuzzer.

``python -m strop.testing.fuzz --n N --seed S [--seconds T]`` generates small NumPy programs
(generate.py), checks every transform against an oracle that is not the code under test
(oracles.py), shrinks each failure (minimize.py) and writes it as a standalone script.
"""
