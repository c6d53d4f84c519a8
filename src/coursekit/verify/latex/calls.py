r"""Applications: ``f(x)``, ``\alpha(\mathbf q, \mathbf k)``, ``\mathrm{softmax}(x)``,
``O(T^2 d)`` -- or, for ``T(d + 1)`` and ``n(n-1)``, a product; any other ``x(y)`` is refused as
ambiguous rather than guessed.
"""

from __future__ import annotations

from coursekit.verify.expr import FormulaError
from coursekit.verify.latex.atoms import Info
from coursekit.verify.latex.operators import Operators
from coursekit.verify.tree import Call, Name, Node, free_names

ORDERS = {"O": "O", "mathcal_O": "O", "Theta": "Theta", "Omega": "Omega"}
# Letters conventionally naming functions: f(x), p(x), \sigma(z), \mathcal{L}(\theta).
FUNCTION_HEADS = frozenset({"f", "g", "p", "q", "F", "G", "sigma", "phi", "varphi", "psi"})


class Calls(Operators):
    """Whether a name before ``(`` is applied, and its arguments."""

    def after_call(self, call: Call) -> Node:
        raise NotImplementedError  # a script after the call: the scripts layer

    def names_a_function(self, base: Node, info: Info) -> bool:
        """``f``, ``\\sigma``, ``\\mathcal{L}``, ``\\mathrm{softmax}``, a declared function."""
        if not isinstance(base, Name):
            return False
        heads = FUNCTION_HEADS | {"mathcal"}
        return info.kind == "text" or info.head in heads or base.id in self.functions

    # -- applications --------------------------------------------------------------------------
    def opens_call(self) -> bool:
        return self.is_char("(") or (self.is_cmd("left") and self.is_char("(", self.peek()))

    def application(self, base: Node, info: Info) -> Node:
        """``f(x)``, ``\\alpha(q, k)``, ``\\mathrm{softmax}(x)``, ``O(T^2 d)``, or nothing."""
        if self.is_char("[") and info.nameable and not self.bracket_lists():
            raise self.fail(f"{self.source(base.offset)}[…] (an index, a lookup or an expectation)")
        if not (self.opens_call() and info.nameable and isinstance(base, Name)):
            return base
        order = ORDERS.get(base.id)
        if order is not None:
            args = self.call_arguments()
            if len(args) != 1:
                raise self.fail(f"{order}(…) takes one argument", self.toks[self.i - 1])
            return Call(order, (args[0],), base.offset)
        if not self.applies(base, info):
            return base
        return self.after_call(Call(base.id, tuple(self.call_arguments()), base.offset))

    def bracket_lists(self) -> bool:
        """Does the ``[`` here hold a list (``W[h_{t-1}, x_t]``: a product with a concatenation)?"""
        depth, k = 0, self.i
        while self.toks[k].kind != "end":
            u = self.toks[k]
            if u.kind == "char" and u.value in "([{":
                depth += 1
            elif u.kind == "char" and u.value in ")]}":
                depth -= 1
                if depth == 0:
                    return False
            elif depth == 1 and u.kind == "char" and u.value in ",;":
                return True
            k += 1
        return False

    def applies(self, base: Name, info: Info) -> bool:
        """Whether ``name(…)`` is an application (True), a product (False), or refused."""
        args = self.trial_arguments()
        if info.kind == "text" or base.id in self.functions:
            return True
        if args is None or len(args) > 1 or info.head in FUNCTION_HEADS or info.head == "mathcal":
            return True
        letter = base.id.split("_", 1)[1][:1] if info.kind == "styled" else info.head
        single = isinstance(args[0], Name) or (
            isinstance(args[0], Call) and args[0].func == "Indexed"
        )
        upper = letter[:1].isupper() and info.kind in {"letter", "styled"}
        if upper and not single and info.head not in {"hat", "tilde", "bar", "vec", "dot"}:
            return False  # W(x + b), T(d_h^2 + d_h d_x): a matrix or a count times a sum
        if "_" in base.id and not single:
            return False  # \alpha_{ij}(x_j W^V): a subscripted weight times an expression
        used = free_names(args[0])
        if not upper and not single and any(n.split("_")[0] == base.id for n in used):
            return False  # n(n-1): the quantity times an expression in itself
        shown = self.source(base.offset)
        raise self.fail(
            f"{shown}(…) could be a function applied to its argument or a product: declare "
            f"{base.id} as a function, write \\operatorname{{{base.id}}}(…), or a \\cdot",
            self.tok,
        )

    def trial_arguments(self) -> list[Node] | None:
        """The arguments a call here would have, read ahead; None when they cannot be read.

        Remembered by position, so nested calls `f(g(h(x)))` are read ahead once each, not
        exponentially often.
        """
        key = (self.i, self.norm_depth)
        if key in self.trials:
            return self.trials[key]
        saved = self.i
        found: list[Node] | None
        try:
            found = self.call_arguments()
        except FormulaError:
            found = None
        finally:
            self.i = saved
        self.trials[key] = found
        return found
