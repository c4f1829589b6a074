# KernelBench level 1 88 (MinGPT's new GELU): eight ATen calls that one pointwise kernel computes.
import math

import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def get_inputs():
    return [torch.randn(8192, 8192)]


def get_init_inputs():
    return []
