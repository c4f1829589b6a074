# KernelBench level 1 53 (min over dim 1), at its shape: the [outer, dim, inner] families (core/ops/cards.cpp).
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.min(x, dim=1)[0]


def get_inputs():
    return [torch.rand(128, 4096, 4095)]


def get_init_inputs():
    return []
