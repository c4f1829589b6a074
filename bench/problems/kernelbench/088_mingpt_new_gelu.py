# KernelBench level 1, problem 88 (MinGPT's tanh GELU, written out), at KernelBench's own shape: x (8192, 8192).
import math

import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def get_inputs():
    return [torch.rand(8192, 8192)]


def get_init_inputs():
    return []
