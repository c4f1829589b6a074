# KernelBench level 1, problem 95 (cross entropy over 4096 classes), at KernelBench's own shape: predictions (32768, 4096), targets int64 (32768,).
import torch


class Model(torch.nn.Module):
    def forward(self, predictions, targets):
        return torch.nn.functional.cross_entropy(predictions, targets)


def get_inputs():
    return [torch.rand(32768, 4096), torch.randint(0, 4096, (32768,))]


def get_init_inputs():
    return []
