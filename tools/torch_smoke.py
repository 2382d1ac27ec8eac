"""Torch smoke test on a real GPU (tools/device_check.sh step 4).

    PYTHONPATH=<package dir> python tools/torch_smoke.py CIFAR10_DATASET

Loads device batches (GPU 0, the fused float32 transform) and takes them
with torch.from_dlpack, which passes torch's current stream to
__dlpack__(stream=...): first on the default stream, then inside
`torch.cuda.stream(side)` on a side stream. Checks that every tensor is on
cuda:0 and equal to the host loader's batch (device=-1, same options), then
takes one training step of a small CNN and checks the loss is finite. Prints
the GPU, torch and CUDA versions. Exit 0: passed; 1: a check failed; 2: no
CUDA-enabled torch or no GPU (a failure for device_check.sh).
"""
import sys


def main(dataset):
    try:
        import torch
    except ImportError as e:
        print(f"torch smoke: cannot import torch ({e})")
        return 2
    if not torch.cuda.is_available():
        print(f"torch smoke: torch {torch.__version__} sees no CUDA device "
              f"(built for CUDA {torch.version.cuda})")
        return 2
    import shardfeed

    print(f"torch smoke: torch {torch.__version__} (CUDA {torch.version.cuda}) on "
          f"{torch.cuda.get_device_name(0)}")
    options = dict(split="train", batch_size=64, seed=3, epochs=1,
                   transforms={"image": "chw,float32,cifar10,pad=4,flip"})
    host = [(torch.from_dlpack(b["image"]).clone(), torch.from_dlpack(b["label"]).clone())
            for b in shardfeed.Loader(dataset, device=-1, **options)]
    loader = shardfeed.Loader(dataset, device=0, **options)
    if loader.device != 0:
        print(f"torch smoke: FAIL: the loader is on {loader.device} ({loader.device_note})")
        return 1
    side = torch.cuda.Stream()
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(), torch.nn.Linear(16, 10)).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    n = 0
    for k, batch in enumerate(loader):
        if k % 2:  # odd batches on a side stream: __dlpack__(stream=side)
            with torch.cuda.stream(side):
                images, labels = torch.from_dlpack(batch["image"]), torch.from_dlpack(batch["label"])
                got = (images.cpu(), labels.cpu())
        else:
            images, labels = torch.from_dlpack(batch["image"]), torch.from_dlpack(batch["label"])
            got = (images.cpu(), labels.cpu())
        if images.device != torch.device("cuda:0"):
            print(f"torch smoke: FAIL: batch {k} on {images.device}")
            return 1
        want = host[k]
        if not (torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])):
            print(f"torch smoke: FAIL: batch {k} differs from the host loader's")
            return 1
        if k == 0:  # one training step, on the default stream
            loss = torch.nn.functional.cross_entropy(model(images), labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            torch.cuda.synchronize()
            if not torch.isfinite(loss):
                print(f"torch smoke: FAIL: loss {loss.item()}")
                return 1
            print(f"torch smoke: one training step, loss {loss.item():.4f}")
        n += 1
    if n != len(host):
        print(f"torch smoke: FAIL: {n} device batches, {len(host)} host batches")
        return 1
    print(f"torch smoke: PASS ({n} batches equal to the host loader's, default and side stream)")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
