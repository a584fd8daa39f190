# Builds the account, container and object rings of a dfsbench lab in one Python process
# (swift-ring-builder costs ~1.2 s a call). argv: swift_dir part_power replicas then one
# "ip:device" per storage node; each node is its own zone.
import os
import sys

from swift.common.ring import RingBuilder

swift_dir, part_power, replicas = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
nodes = [arg.split(":") for arg in sys.argv[4:]]
for kind, port in (("account", 6202), ("container", 6201), ("object", 6200)):
    builder = RingBuilder(part_power, replicas, 0)
    for i, (ip, device) in enumerate(nodes):
        builder.add_dev({"id": i, "region": 1, "zone": i + 1, "ip": ip, "port": port,
                         "device": device, "weight": 100, "meta": ""})
    builder.rebalance()
    builder.save(os.path.join(swift_dir, kind + ".builder"))
    builder.get_ring().save(os.path.join(swift_dir, kind + ".ring.gz"))
