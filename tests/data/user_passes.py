"""A pass file as a user would write it, loaded by path in the tests."""

import torch
from executorch.exir.pass_base import ExportPass
from torch.fx.passes.infra.pass_base import PassResult


class IdentityExportPass(ExportPass):
    pass


class WantsProgram:
    def __init__(self, exported_program):
        self.program = exported_program

    def __call__(self, gm):
        assert self.program.graph_module is gm
        return PassResult(gm, False)


def identity_function(gm: torch.fx.GraphModule):
    return gm


identity_instance = IdentityExportPass()
NOT_A_PASS = 42


class NeedsTwoArgs:
    def __init__(self, a, b):
        pass

    def __call__(self, gm):
        return gm
