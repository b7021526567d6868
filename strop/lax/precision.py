"""``lax.Precision``: JAX's enum for the ``precision=`` of its matrix products and
convolutions. strop accepts it where JAX's lax takes it (the convolutions) and ignores it:
NumPy and strop's compiled code compute in the operands' own precision (float32 products in
float32, float64 in float64), which is what ``Precision.HIGHEST`` asks of an accelerator; there
is no lower-precision mode (bfloat16 passes, TensorFloat-32) to select on a CPU."""
import enum

__all__ = ["Precision"]


class Precision(enum.Enum):
    """JAX's precision levels, by the same names and values; also made from JAX's strings
    (``Precision("highest")``, ``"bfloat16"``, ``"tensorfloat32"``, ``"float32"``)."""
    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value):
        names = {"default": cls.DEFAULT, "fastest": cls.DEFAULT, "bfloat16": cls.DEFAULT,
                 "high": cls.HIGH, "bfloat16_3x": cls.HIGH, "tensorfloat32": cls.HIGH,
                 "highest": cls.HIGHEST, "float32": cls.HIGHEST}
        if isinstance(value, str) and value.lower() in names:
            return names[value.lower()]
        return None

    def __repr__(self):
        return f"Precision.{self.name}"

    def __str__(self):
        return self.name
