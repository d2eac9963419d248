"""Applies the data model that the Python SDK's data modeling tests read from the space IntegrationTestSpace: the
model Movie, version 1. Their fixture writes it through GraphQL DML, which Strata does not serve; this writes the
same types as containers and views. Usage: movie_model.py BASE_URL PROJECT TOKEN"""
import json
import sys
import urllib.request

SPACE, VERSION = "IntegrationTestSpace", "1"

# container -> property -> (type, nullable)
CONTAINERS = {
    "Person": {"name": ("text", False), "birthYear": ("int32", True)},
    "Nomination": {"name": ("text", False), "year": ("int32", False)},
    "Role": {"wonOscar": ("boolean", True), "person": ("direct", True)},
    "Rating": {"score": ("timeseries", True), "votes": ("timeseries", True)},
    "Movie": {"title": ("text", False), "releaseYear": ("int32", True), "runTimeMinutes": ("float64", True),
              "meta": ("json", True), "rating": ("direct", True)},
}
# view -> (container, implements, edge property -> (edge type owner, target view), direct property -> target view)
ROLE_EDGES = {"movies": ("Role", "Movie"), "nomination": ("Role", "Nomination")}
VIEWS = {
    "Person": ("Person", [], {"roles": ("Person", "Role")}, {}),
    "Nomination": ("Nomination", [], {}, {}),
    "BestDirector": ("Nomination", ["Nomination"], {}, {}),
    "BestLeadingActor": ("Nomination", ["Nomination"], {}, {}),
    "BestLeadingActress": ("Nomination", ["Nomination"], {}, {}),
    "Role": ("Role", [], ROLE_EDGES, {"person": "Person"}),
    "Actor": ("Role", ["Role"], ROLE_EDGES, {"person": "Person"}),
    "Director": ("Role", ["Role"], ROLE_EDGES, {"person": "Person"}),
    "Rating": ("Rating", [], {}, {}),
    "Movie": ("Movie", [], {"actors": ("Movie", "Actor"), "directors": ("Movie", "Director")}, {"rating": "Rating"}),
}


# The tests name the view Person by the version the reference gave it when their fixture applied the model.
VIEW_VERSIONS = {"Person": "37ce1494b83df2"}


def view_ref(external_id):
    return {"type": "view", "space": SPACE, "externalId": external_id, "version": VIEW_VERSIONS.get(external_id, VERSION)}


def view(name, container, implements, edges, directs):
    props = {}
    for p in CONTAINERS[container]:
        props[p] = {"container": {"type": "container", "space": SPACE, "externalId": container},
                    "containerPropertyIdentifier": p}
        if p in directs:
            props[p]["source"] = view_ref(directs[p])
    for p, (owner, target) in edges.items():
        props[p] = {"connectionType": "multi_edge_connection", "type": {"space": SPACE, "externalId": f"{owner}.{p}"},
                    "source": view_ref(target), "direction": "outwards"}
    return {"space": SPACE, "externalId": name, "version": VIEW_VERSIONS.get(name, VERSION), "implements": [view_ref(i) for i in implements],
            "properties": props}


def main():
    base, project, token = sys.argv[1:4]

    def post(path, items):
        req = urllib.request.Request(f"{base}/api/v1/projects/{project}/models/{path}", json.dumps({"items": items}).encode(),
                                     {"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        with urllib.request.urlopen(req) as res:
            res.read()

    post("spaces", [{"space": SPACE, "name": "Integration Test Space"}])
    post("containers", [{"space": SPACE, "externalId": name, "usedFor": "node",
                         "properties": {p: {"type": {"type": t}, "nullable": n} for p, (t, n) in props.items()}}
                        for name, props in CONTAINERS.items()])
    post("views", [view(name, *spec) for name, spec in VIEWS.items()])
    post("datamodels", [{"space": SPACE, "externalId": "Movie", "version": VERSION, "name": "Movie Model",
                         "views": [view_ref(v) for v in VIEWS]}])


if __name__ == "__main__":
    main()
