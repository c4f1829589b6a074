# KernelBench level 1, problem 36 (RMSNorm over dim 1, written out), at KernelBench's own shape: x (112, 64, 512, 512).
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        rms = torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + 1e-5)
        return x / rms


def get_inputs():
    return [torch.rand(112, 64, 512, 512)]


def get_init_inputs():
    return []
