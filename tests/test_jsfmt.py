"""JavaScript number text: Math.round, toFixed, String(number), r3."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from thatchlab.core.jsfmt import js_number, js_round, r3, to_fixed


@pytest.mark.parametrize("x, expected", [
    (0.5, 1.0), (1.5, 2.0), (2.5, 3.0), (-0.5, -0.0), (-2.5, -2.0), (-2.6, -3.0),
    (2.25, 2.0), (0.49999999999999994, 0.0), (4503599627370495.5, 4503599627370496.0), (0.0, 0.0),
])
def test_js_round_ties_go_up(x, expected):
    assert js_round(x) == expected


def test_js_round_vectorised_and_nan():
    out = js_round(np.array([0.5, 1.25, np.nan, np.inf]))
    assert out[:2].tolist() == [1.0, 1.0]
    assert math.isnan(out[2]) and out[3] == np.inf


@pytest.mark.parametrize("x, expected", [
    (0.1235, 0.124), (0.6004, 0.6), (0.4545, 0.455), (0.0005, 0.001), (0.59949, 0.599),
    (0.5995, 0.6), (1.0, 1.0), (-0.0005, -0.0),
])
def test_r3(x, expected):
    assert r3(x) == expected


@pytest.mark.parametrize("x, digits, expected", [
    (0.625, 2, "0.63"), (0.185, 2, "0.18"), (0.455, 2, "0.46"), (0.5, 2, "0.50"), (1, 2, "1.00"),
    (0.58333, 2, "0.58"), (0.005, 2, "0.01"), (0.015, 2, "0.01"), (1.005, 2, "1.00"),
    (2.5, 0, "3"), (1e21, 2, "1e+21"), (-0.001, 2, "-0.00"), (-1.235, 2, "-1.24"), (0.0, 2, "0.00"),
    (123.456, 1, "123.5"), (float("nan"), 2, "NaN"),
])
def test_to_fixed_matches_javascript(x, digits, expected):
    assert to_fixed(x, digits) == expected


@pytest.mark.parametrize("x, expected", [
    (1.0, "1"), (1.25, "1.25"), (0.5, "0.5"), (0, "0"), (-0.0, "0"), (2.75, "2.75"), (100.0, "100"),
    (1e21, "1e+21"), (1e-7, "1e-7"), (1.5e-7, "1.5e-7"), (0.000001, "0.000001"), (123456789.0, "123456789"),
    (0.1 + 0.2, "0.30000000000000004"), (-3.5, "-3.5"), (float("inf"), "Infinity"), (1e20, "100000000000000000000"),
])
def test_js_number(x, expected):
    assert js_number(x) == expected


@given(st.floats(min_value=0, max_value=1e6, allow_nan=False))
def test_to_fixed_is_within_half_unit(x):
    text = to_fixed(x, 2)
    assert abs(float(text) - x) <= 0.005 + 1e-9


@given(st.floats(min_value=-1e15, max_value=1e15, allow_nan=False))
def test_js_number_round_trips(x):
    assert float(js_number(x)) == x


@given(st.floats(min_value=-1e9, max_value=1e9, allow_nan=False))
def test_js_round_is_floor_of_x_plus_half(x):
    # exact for every double in this range except the famous 0.49999999999999994 case,
    # which python's Fraction arithmetic settles
    from fractions import Fraction
    assert js_round(x) == math.floor(Fraction(x) + Fraction(1, 2))
