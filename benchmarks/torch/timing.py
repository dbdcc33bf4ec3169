"""Timing shared by the PyTorch transcriptions: the wall-clock and CPU seconds of each repeat."""
import time


def wall_and_cpu(fn, reps):
    """Run fn() reps times; return the wall-clock and the CPU seconds of the runs, each sorted."""
    wall, cpu = [], []
    for _ in range(reps):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    wall.sort()
    cpu.sort()
    return wall, cpu
