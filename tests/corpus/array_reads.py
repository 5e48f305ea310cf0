"""Reading float arrays: x[i], x[i, j], constant indices, iteration, len, shape."""
import math

import numpy as np

from . import Case

_rng = np.random.default_rng(1234)
X5 = np.array([0.3, -1.2, 0.8, 2.1, -0.4])
Y5 = np.array([1.1, 0.5, -0.9, 0.2, 1.7])
X100 = _rng.standard_normal(100)
A34 = _rng.standard_normal((3, 4))
W4 = _rng.standard_normal(4)
IDX = np.array([4, 0, 2, 2, 1], dtype=np.int64)
KEEP = np.array([True, False, True, True, False])


def sum_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    return s


def sum_of_squares_len(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
    return s


def iterate_elements(x):
    s = 0.0
    for a in x:
        s += math.sin(a) * a
    return s


def constant_indices(x):
    return x[0] * x[1] - x[-1] * 2.0 + x[2] ** 2


def dot(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * y[i]
    return s


def neighbours(x):
    # Rosenbrock-style: reads x[i] and x[i + 1]
    s = 0.0
    for i in range(len(x) - 1):
        s += 100.0 * (x[i + 1] - x[i] * x[i]) ** 2 + (1.0 - x[i]) ** 2
    return s


def large_array_sum_sin(x):
    s = 0.0
    for i in range(x.size):
        s += math.sin(x[i])
    return s


def matrix_2d(a):
    s = 0.0
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            s += a[i, j] * (i + 1) - a[i, j] ** 2 * 0.1 * j
    return s


def matrix_vector(a, w):
    n, m = a.shape
    s = 0.0
    for i in range(n):
        t = 0.0
        for j in range(m):
            t += a[i, j] * w[j]
        s += t * t
    return s


def matrix_row_iteration(a):
    s = 0.0
    for row in a:
        s += row[0] * row[1] + row[3]
    return s


def module_level_selections(x):
    # x[IDX] and x[KEEP] with module-level index arrays: constants to Numba, which types
    # them as static_getitem (repeated index 2 accumulates)
    return np.sum(x[IDX] ** 2) + np.sum(np.sin(x[KEEP]))


def gather_int_index(x, idx):
    s = 0.0
    for k in range(idx.shape[0]):
        s += x[idx[k]] * (k + 1)
    return s


def scalar_times_element(x, c):
    s = 0.0
    for i in range(x.shape[0]):
        s += c * x[i] * x[i] + c * c * x[i]
    return s


def max_loop(x):
    # running maximum: the gradient goes to the arg-max element
    m = x[0]
    for i in range(1, len(x)):
        if x[i] > m:
            m = x[i]
    return m * m


CASES = [
    Case(sum_loop, (X5,)),
    Case(sum_of_squares_len, (X5,)),
    Case(iterate_elements, (X5,)),
    Case(constant_indices, (X5,)),
    Case(dot, (X5, Y5), (0, 1)),
    Case(neighbours, (X5 * 0.5,)),
    Case(large_array_sum_sin, (X100,)),
    Case(matrix_2d, (A34,)),
    Case(matrix_vector, (A34, W4), (0, 1)),
    Case(matrix_row_iteration, (A34,)),
    Case(gather_int_index, (X5, IDX)),
    Case(module_level_selections, (X5,)),
    Case(scalar_times_element, (X5, 0.7), (0, 1)),
    Case(max_loop, (X5,)),
]


def row_views(a, w):
    # row = a[i] is a view: its shadow is the same row of a's shadow
    s = 0.0
    for i in range(a.shape[0]):
        row = a[i]
        for j in range(row.shape[0]):
            s += row[j] * w[j] * (i + 1)
    return s


def slice_reads(x, lo, hi):
    y = x[1:]
    z = x[lo:hi]
    s = 0.0
    for i in range(len(y)):
        s += y[i] * z[i % len(z)] ** 2
    for v in x[::2]:
        s += v ** 3
    return s


def nested_row_iteration(a):
    s = 0.0
    for row in a:
        for v in row[1:]:
            s += math.sin(v) * row[0]
    return s


def column_and_block_views(a):
    col = a[:, 1]
    blk = a[1:, 2:]
    return col[0] * col[2] + blk[1, 0] * blk[0, 1] - a[2, 1:][2]


def loop_variable_after_loop(x):
    s = 0.0
    for a in x:
        s += a
    return s * a


CASES += [
    Case(row_views, (A34, W4), (0, 1)),
    Case(slice_reads, (X5, 1, 4)),
    Case(nested_row_iteration, (A34,)),
    Case(column_and_block_views, (A34,)),
    Case(loop_variable_after_loop, (X5,)),
]


def enumerate_weights(x):
    s = 0.0
    for i, v in enumerate(x):
        s += v * v * (i + 1)
    return s


def zip_pairs(x, w):
    s = 0.0
    for a, b in zip(x, w):
        s += math.sin(a) * b
    return s


CASES += [
    Case(enumerate_weights, (X5,)),
    Case(zip_pairs, (X5, W4), (0, 1)),  # lengths 5 and 4: zip stops at the shorter
]


def enumerate_zip(x, w):
    """``enumerate(zip(...))``: once silently differentiated as zeros."""
    s = 0.0
    for i, t in enumerate(zip(x, w)):
        s += t[0] * t[1] * (i + 1)
    return s


def enumerate_zip_unpacked(x, w):
    s = 0.0
    for i, (a, b) in enumerate(zip(x, w)):
        s += math.sin(a) * b - i * a
    return s


def enumerate_rows(a):
    s = 0.0
    for i, row in enumerate(a):
        s += np.sum(row * row) * (i + 1)
    return s


def zip_rows(a, b):
    s = 0.0
    for r, q in zip(a, b):
        s += np.sum(r * q)
    return s


def enumerate_from_one(x):
    s = 0.0
    for k, v in enumerate(x, 1):
        s += v * v * k
    return s


def zip_assigned_then_iterated(x, w):
    pairs = zip(x, w)
    s = 0.0
    for t in pairs:
        s += t[0] * t[1]
    return s


CASES += [
    Case(enumerate_zip, (X5, W4), (0, 1)),
    Case(enumerate_zip_unpacked, (X5, W4), (0, 1)),
    Case(enumerate_rows, (A34,)),
    Case(zip_rows, (A34, A34[::-1].copy()), (0, 1)),
    Case(enumerate_from_one, (X5,)),
    Case(zip_assigned_then_iterated, (X5, W4), (0, 1)),
]


def embedding_rows(table, ids, w):
    """``table[ids]``: rows gathered by integer position, repeated and negative ones too
    (an embedding lookup)."""
    return np.sum(np.tanh(table[ids] @ w))


def masked_rows(a, y):
    """``a[y > 0]``: the rows where a 1-D mask is true."""
    return np.sum(a[y > 0] ** 2 * 0.5) + np.sum(np.sin(a[np.array([2, -1, 2])]))


CASES += [
    Case(embedding_rows, (A34.T.copy(), np.array([1, 3, 1, -1]), _rng.standard_normal(3)),
         (0, 2)),
    Case(masked_rows, (A34.T.copy(), np.array([1.0, -1.0, 2.0, 0.5])), 0),
]


def ndenumerate_weights(a):
    """``np.ndenumerate``: the index tuple weights each element (C order, any layout)."""
    s = 0.0
    for idx, v in np.ndenumerate(a):
        s += v * v * (idx[0] + 1) + math.sin(v) * idx[-1]
    return s


def zip_with_range(x, w):
    """``zip(range(n), x, w)``: the range's item is the index itself."""
    s = 0.0
    for i, a, b in zip(range(len(x)), x, w):
        s += a * b * (i + 1)
    return s


CASES += [
    Case(ndenumerate_weights, (A34,)),
    Case(ndenumerate_weights, (A34.T,)),  # F order: the index still runs in C order
    Case(zip_with_range, (X5, W4), (0, 1)),
]


FACES = np.array([[0, 1, 2], [0, 2, 3], [1, 3, 4]])


def face_gather(u, weights):
    # a mesh's per-face vertex values read with its (faces, 3) index array
    uf = u[FACES]
    return np.sum(weights[0] * (uf[:, 0] - uf[:, 1]) ** 2 + (uf[:, 1] - uf[:, 2]) ** 2)


CASES += [Case(face_gather, (X5, np.array([1.5, 0.5])), (0, 1))]
