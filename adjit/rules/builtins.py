"""Rules for Python builtins and scalar conversions: ``abs``, ``min``, ``max``, ``float``."""
import numpy as np
from numba.core import types

from .core import ONE, defderiv, defderivs

defderiv(abs, lambda x: 1.0 if x >= 0 else -1.0)
# ties go to the first argument, as Python's min/max return it
defderiv(min, lambda a, b: 1.0 if a <= b else 0.0, lambda a, b: 0.0 if a <= b else 1.0)
defderiv(max, lambda a, b: 1.0 if a >= b else 0.0, lambda a, b: 0.0 if a >= b else 1.0)
# ``numba.float64(v)`` / ``numba.float32(v)`` used as a cast: Numba's type objects are
# callable in compiled code, and the call is the same conversion as ``np.float64(v)``
defderivs((float, np.float64, np.float32, np.double, np.single, types.float64, types.float32),
          ONE)
