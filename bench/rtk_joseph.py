#!/usr/bin/env python3
# bench/rtk_joseph.py [THREADS]: the peer of `bench_cpu --system hologic --bin 4 --views 15`:
# RTK's Joseph forward and back projectors (pip install itk-rtk) on the same problem (the
# hologic preset: 15 views over 15 deg, SID 700 mm, pivot at the detector; its detector binned
# 4 x 4 to 416 x 512 pixels of 0.56 mm; a 416 x 512 x 50 grid of 0.56 x 0.56 x 1 mm holding a
# uniform 0.05 /mm slab), timed once each. docs/performance.md, "Against RTK".
import sys, time, math
import itk
from itk import RTK as rtk
threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1
itk.MultiThreaderBase.SetGlobalDefaultNumberOfThreads(threads)
itk.MultiThreaderBase.SetGlobalMaximumNumberOfThreads(threads)
nc, nr, nv, pix = 416, 512, 15, 0.56
nx, ny, nz, dx, dz = 416, 512, 50, 0.56, 1.0
geo = rtk.ThreeDCircularProjectionGeometry.New()
for k in range(nv):
    a = math.radians(-7.5 + 15.0 * k / (nv - 1))
    src = itk.Point[itk.D, 3]([700 * math.sin(a), 0.0, 700 * math.cos(a)])
    det = itk.Point[itk.D, 3]([0.0, 0.0, 0.0])
    u = itk.Vector[itk.D, 3]([1.0, 0.0, 0.0]); v = itk.Vector[itk.D, 3]([0.0, 1.0, 0.0])
    assert geo.AddProjection(src, det, u, v)
IT = itk.Image[itk.F, 3]
def const(size, spacing, origin, val):
    c = rtk.ConstantImageSource[IT].New()
    c.SetSize(size); c.SetSpacing(spacing); c.SetOrigin(origin); c.SetConstant(val); c.Update()
    return c.GetOutput()
vol = const([nx, ny, nz], [dx, dx, dz], [-(nx - 1) / 2 * dx, dx / 2, dz / 2], 0.05)
proj0 = const([nc, nr, nv], [pix, pix, 1.0], [-(nc - 1) / 2 * pix, pix / 2, 0.0], 0.0)
fp = rtk.JosephForwardProjectionImageFilter[IT, IT].New()
fp.SetInput(0, proj0); fp.SetInput(1, vol); fp.SetGeometry(geo)
t = time.time(); fp.Update(); tf = time.time() - t
proj = fp.GetOutput()
vol0 = const([nx, ny, nz], [dx, dx, dz], [-(nx - 1) / 2 * dx, dx / 2, dz / 2], 0.0)
bp = rtk.JosephBackProjectionImageFilter[IT, IT].New()
bp.SetInput(0, vol0); bp.SetInput(1, proj); bp.SetGeometry(geo)
t = time.time(); bp.Update(); tb = time.time() - t
arr = itk.array_view_from_image(proj)
print(f"rtk {itk.Version.GetITKVersion()} threads {threads}: forward {tf:.3f} s, back {tb:.3f} s, centre ray {arr[7, nr//2, nc//2]:.4f} (slab 50 mm x 0.05 = 2.5)")
