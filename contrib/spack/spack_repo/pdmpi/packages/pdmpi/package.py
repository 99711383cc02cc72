# pdmpi for Spack (1.0 and later): a package repository of one package.
#
#   spack repo add contrib/spack/spack_repo/pdmpi
#   spack dev-build -d . pdmpi@=0.1.0 +pmix ~cuda
#
# pdmpi has no published release archive yet, so the package builds from a
# checkout (dev-build, or `spack develop` in an environment).

from spack_repo.builtin.build_systems.autotools import AutotoolsPackage

from spack.package import *


class Pdmpi(AutotoolsPackage):
    """MPI with Open MPI 4.1's ABI on PaddlePaddle's collective backends:
    gloo for host memory, NCCL for CUDA memory, BKCL for Kunlun XPU
    memory. Programs compiled against Open MPI's mpi.h run on it after a
    relink (pdmpicc), or unchanged through its libmpi.so.40 drop-in."""

    maintainers("pdmpi")

    variant("cuda", default=False,
            description="Build the NCCL binding against the CUDA runtime and "
            "NCCL headers (the libraries are loaded at run time)")
    variant("pmix", default=True,
            description="Start under PMIx launchers (mpirun, srun --mpi=pmix); "
            "libpmix is loaded at run time")

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("autoconf", type="build")
    depends_on("automake", type="build")
    depends_on("libtool", type="build")
    depends_on("pkgconfig", type="build")

    depends_on("gloo")
    # Open MPI's mpi.h is pdmpi's interface: needed to build pdmpi and, by
    # pdmpicc, to build programs against it.
    depends_on("openmpi@4.1", type=("build", "run"))
    depends_on("pmix", when="+pmix")
    depends_on("cuda", when="+cuda")
    depends_on("nccl", when="+cuda")

    conflicts("platform=darwin", msg="pdmpi supports Linux only")
    conflicts("platform=windows", msg="pdmpi supports Linux only")

    def autoreconf(self, spec, prefix):
        Executable("./autogen.sh")()

    def configure_args(self):
        spec = self.spec
        args = [
            "--with-ompi-headers={0}".format(spec["openmpi"].prefix.include),
            "--with-gloo={0}".format(spec["gloo"].prefix),
        ]
        if spec.satisfies("+pmix"):
            args.append("--with-pmix={0}".format(spec["pmix"].prefix))
        else:
            args.append("--without-pmix")
        if spec.satisfies("+cuda"):
            args.append("--with-cuda={0}".format(spec["cuda"].prefix))
            args.append("--with-nccl={0}".format(spec["nccl"].prefix))
        else:
            args += ["--without-cuda", "--without-nccl"]
        return args

    def check(self):
        # The full suite needs root for its multi-host tests; the main job
        # (a trainer checked against a single-process run, at 4 ranks) runs
        # anywhere.
        make("main-job")
