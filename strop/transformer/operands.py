"""Lists and tuples where NumPy reads arrays (part of the normalizer, which mixes it in).

NumPy turns a list or tuple given as an array operand into an array (np.asarray); Python's
``+`` and ``*`` concatenate and repeat sequences.  The derivative passes read a display as a
container of values, so each such operand is made explicit here:

- an array parameter of a NumPy function (every input of a ufunc; the parameters in
  ``ARRAY_PARAMS`` of a function with a rule) given a display holding a name, a name bound
  to a display, or a parameter given a list or tuple (rebuilt from its leaves in the function:
  transformer/flatten.py): ``np.asarray`` of it, made a name first (vmap stacks a named
  container's lanes); NumPy does the same, and compiled code then sees an array;
- ``-``, ``/``, ``//``, ``**``, ``@`` with one sequence operand: only arrays take those, so the
  same;
- ``+`` and ``*`` with a sequence operand: NumPy's where the other operand is a bound array,
  else ``plus`` / ``times`` (Python's operator, whose derivatives look at the operands' types
  when the code runs: concatenation, repetition, or NumPy's arithmetic).

Where Python itself refuses the operation (``t ** 3`` and ``[x, y] - 1.0``: a sequence and a
Python number under an operator only arrays take, ``(x, y) * 2.0``, two sequences under
anything but ``+``, a list plus a tuple), the transformed code raises Python's own TypeError
at that line, when it runs (as Python would: a branch not taken raises nothing), whatever the
transform; it never computes what the plain function refuses.  Decided when transforming,
from what the operands are: a display or a name bound to one, a parameter given a list or
tuple, a Python number written or bound outside.  An operand known only when the code runs
keeps the rules above.
"""
import operator

import gast
import numpy as np

from . import ir

# parameters of NumPy functions that NumPy reads with np.asarray (not sequences of arrays,
# shapes or axes)
ARRAY_PARAMS = frozenset((
    "a", "A", "a_min", "a_max", "min", "max", "append", "prepend", "arr", "array", "ary", "b",
    "default", "f", "fill_value", "fp", "xp", "left", "right", "m", "p", "q", "start", "stop",
    "v", "val", "values", "weights", "x", "x1", "x2", "y"))
ARRAY_ONLY_OPS = (gast.Sub, gast.Div, gast.FloorDiv, gast.Pow, gast.MatMult)
SEQUENCE_OPS = {gast.Add: "plus", gast.Mult: "times"}
PYTHON_OPS = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
              gast.Div: operator.truediv, gast.FloorDiv: operator.floordiv,
              gast.Mod: operator.mod, gast.Pow: operator.pow, gast.MatMult: operator.matmul,
              gast.BitAnd: operator.and_, gast.BitOr: operator.or_, gast.BitXor: operator.xor,
              gast.LShift: operator.lshift, gast.RShift: operator.rshift}
PYTHON_NUMBERS = (bool, int, float, complex, str, bytes, type(None))
_UNKNOWN = object()


class Operands:
    def is_sequence(self, node, atom):
        """Whether the user's operand ``node`` (normalized to ``atom``) is a list or tuple."""
        if isinstance(node, (gast.List, gast.Tuple, gast.ListComp)):
            return True
        if isinstance(atom, gast.Name) and isinstance(self.displays.get(atom.id), int):
            return True
        if isinstance(atom, gast.Name) and atom.id in self.sequences:
            return True
        return self.is_ref(atom) and isinstance(self.ref_object(atom), (list, tuple))

    def sequence_types(self, node, atom):
        """The types the sequence operand ``node`` (normalized to ``atom``) may have."""
        if isinstance(node, (gast.List, gast.ListComp)):
            return (list,)
        if isinstance(node, gast.Tuple):
            return (tuple,)
        if self.is_ref(atom) and isinstance(self.ref_object(atom), (list, tuple)):
            return (type(self.ref_object(atom)),)
        if isinstance(atom, gast.Name) and atom.id in self.displays:
            for s in reversed(self.out or ()):   # bound in this block: the display's kind
                if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) \
                        and s.targets[0].id == atom.id:
                    if isinstance(s.value, (gast.List, gast.Tuple)):
                        return (list,) if isinstance(s.value, gast.List) else (tuple,)
                    break
        return (tuple, list)

    def python_refuses(self, op, nodes, atoms, seq):
        """Python's TypeError message for ``a op b`` where an operand is a sequence, if Python
        refuses it for every type the operands may have; else None."""
        fn = PYTHON_OPS.get(type(op))
        samples = []
        for node, atom, is_seq in zip(nodes, atoms, seq):
            if is_seq:
                samples.append([t() for t in self.sequence_types(node, atom)])
                continue
            value = atom.value if isinstance(atom, gast.Constant) else \
                self.ref_object(atom) if self.is_ref(atom) else self.bound_constant(atom)
            if fn is None or value is _UNKNOWN or not isinstance(value, PYTHON_NUMBERS):
                return None   # an array, or known only when the code runs
            samples.append([value])
        messages = []
        for a in samples[0]:
            for b in samples[1]:
                try:
                    fn(a, b)
                except TypeError as e:
                    messages.append(str(e))
                else:
                    return None
        if len(set(messages)) > 1:   # a list or a tuple (a parameter): Python's words, both named
            return messages[0].replace("'tuple'", "'tuple' or 'list'")
        return messages[0] if messages else None

    def bound_constant(self, atom):
        """The constant the name ``atom`` holds here, if it was bound to one earlier in this
        block with nothing since that may rebind it (``c = 1.0`` then ``[x, y] - c``)."""
        if not isinstance(atom, gast.Name):
            return _UNKNOWN
        if atom.id in self.constants:
            return self.constants[atom.id]
        for s in reversed(self.out or ()):
            if not isinstance(s, (gast.Assign, gast.Expr)):
                return _UNKNOWN   # a branch or loop between: it may have rebound the name
            if isinstance(s, gast.Assign) and any(
                    isinstance(n, gast.Name) and n.id == atom.id for t in s.targets
                    for n in gast.walk(t)):
                return s.value.value if isinstance(s.value, gast.Constant) and \
                    len(s.targets) == 1 and isinstance(s.targets[0], gast.Name) else _UNKNOWN
        return _UNKNOWN

    def python_raise(self, message, op, atoms, seq, into):
        """The code for an operation Python refuses: its TypeError, raised where the user's
        line runs; the value after it (never computed) typed as NumPy's."""
        self.emit(gast.Raise(exc=ir.call("TypeError", [ir.const(message)]), cause=None))
        left, right = [self.as_array(a) if s else a for a, s in zip(atoms, seq)]
        return self.to_name(gast.BinOp(left=left, op=op, right=right), into)

    def as_array(self, atom):
        """``np.asarray`` of a sequence operand, the sequence named first."""
        seq = self.to_name(atom, force=isinstance(atom, (gast.List, gast.Tuple)))
        asarray = ir.attr(ir.name(self.bind_ref("np", np)), "asarray")
        return self.to_name(ir.call(asarray, [seq]))

    def sequence_binop(self, op, nodes, atoms, into):
        """``a op b`` where an operand is a sequence; None where Python's own operator stays
        (two sequences under an operator only arrays take: Python raises)."""
        self.refuse_complex()
        seq = [self.is_sequence(n, a) for n, a in zip(nodes, atoms)]
        if not any(seq):
            return None
        refused = self.python_refuses(op, nodes, atoms, seq)
        if refused is not None:
            return self.python_raise(refused, op, atoms, seq, into)
        other = atoms[1] if seq[0] else atoms[0]
        array = self.is_ref(other) and isinstance(self.ref_object(other), (np.ndarray, np.generic))
        if type(op) in SEQUENCE_OPS and (all(seq) or not array):
            return self.to_name(ir.call(self.helper(SEQUENCE_OPS[type(op)]), list(atoms)), into)
        if all(seq) or not isinstance(op, ARRAY_ONLY_OPS + tuple(SEQUENCE_OPS)):
            return None
        left, right = [self.as_array(a) if s else a for a, s in zip(atoms, seq)]
        return self.to_name(gast.BinOp(left=left, op=op, right=right), into)

    def array_operands(self, obj, nodes, args, kws):
        """``args`` and ``kws`` of a call of ``obj`` with sequences given to its array
        parameters as arrays."""
        self.refuse_complex()
        if any(obj is f for f in (np.asarray, np.array)) and args and isinstance(
                args[0], (gast.List, gast.Tuple)):     # named, as vmap stacks a name's lanes
            return [self.to_name(args[0], force=True)] + args[1:], kws
        positions, names = _array_params(obj)
        args = [self.as_array(a) if i in positions and self.holds_values(n, a) else a
                for i, (n, a) in enumerate(zip(nodes, args))]
        kws = [(k, self.as_array(v) if k in names and self.holds_values(None, v) else v)
               for k, v in kws]
        return args, kws

    def holds_values(self, node, atom):
        """A sequence operand that holds a name (a constant list stays as NumPy reads it), or
        a parameter given a list or tuple (``sequences``)."""
        if isinstance(atom, (gast.List, gast.Tuple)):
            return any(isinstance(n, gast.Name) for n in gast.walk(atom))
        if isinstance(atom, gast.Name) and atom.id in self.sequences:
            return True
        return self.is_sequence(node, atom) and not self.is_ref(atom)


def _array_params(obj):
    """(positions, keyword names) of ``obj``'s array parameters."""
    from .rules import lookup
    if isinstance(obj, np.ufunc):
        return set(range(obj.nin)), set()
    module = getattr(obj, "__module__", "") or ""
    rule = lookup(obj) if module.startswith("numpy") else None
    if rule is None:
        return set(), set()
    names = [n for n, _ in rule.params]
    return ({i for i, n in enumerate(names[:rule.npositional]) if n in ARRAY_PARAMS},
            {n for n in names if n in ARRAY_PARAMS})
