# KernelBench level 1, problem 20 (leaky_relu), at KernelBench's own shape: x (4096, 393216) float32, uniform [0, 1).
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.leaky_relu(x, negative_slope=0.01)


def get_inputs():
    return [torch.rand(4096, 393216)]


def get_init_inputs():
    return []
