# SPDX-License-Identifier: Apache-2.0
"""The script a Gravplug AMUSE worker starts from (forkserver.py's entry):
`worker_start.py --worker PORT HOST USEMPI` runs one worker in this
process, as AMUSE's generated worker script would; `worker_start.py SOCK`
serves workers forked from this process, which has imported AMUSE and
gravplug's Python modules first (never the library or a plugin: those
load in each child, with its caller's environment)."""
import sys

from amuse.rfi.python_code import PythonImplementation
from amuse.support.literature import TrackLiteratureReferences

from gravplug.amuse import forkserver
from gravplug.amuse.interface import GravplugInterface
from gravplug.amuse.worker import GravplugImplementation


def run_worker(argv):
    """The usual AMUSE Python worker over sockets: argv = port, host,
    usempi (as AMUSE's generated worker script takes them)."""
    x = PythonImplementation(GravplugImplementation(), GravplugInterface)
    if argv[2:3] == ["true"]:
        from amuse.rfi.channel import MpiChannel
        MpiChannel.ensure_mpi_initialized()
        x.start_socket_mpi(int(argv[0]), argv[1])
    else:
        x.start_socket(int(argv[0]), argv[1])


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        run_worker(sys.argv[2:])
    else:
        TrackLiteratureReferences.suppress_output()   # no citation list at the server's exit
        forkserver.serve(sys.argv[1], run_worker)
