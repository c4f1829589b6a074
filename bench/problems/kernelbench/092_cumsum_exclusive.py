# KernelBench level 1, problem 92 (exclusive cumsum over dim 1 (zeros, then the cumsum of all but the last)), at KernelBench's own shape: x (32768, 32768).
import torch


class Model(torch.nn.Module):
    def forward(self, x):
        cumsum = torch.cumsum(x.narrow(dim=1, start=0, length=x.size(1) - 1), dim=1)
        return torch.cat((torch.zeros_like(x.select(1, 0).unsqueeze(1)), cumsum), dim=1)


def get_inputs():
    return [torch.rand(32768, 32768)]


def get_init_inputs():
    return []
