// Which ranks share a simulated node (pure logic): s4bxi-launch --ppn P puts ranks r and s
// on one node when r / P == s / P, the last node taking what is left.
#pragma once

#include <algorithm>
#include <string>

namespace s4bxi::interpose {

struct NodeLayout {
    int world;     // ranks in the run
    int per_node;  // --ppn

    bool valid() const { return world > 0 && per_node > 0; }
    int node_of(int rank) const { return rank / per_node; }
    int first_of_node(int node) const { return node * per_node; }
    int size_of_node(int node) const { return std::min(per_node, world - first_of_node(node)); }
    int nodes() const { return (world + per_node - 1) / per_node; }
    int local_rank(int rank) const { return rank - first_of_node(node_of(rank)); }

    // The ranks of `node`, as PMIx lists local peers: "4,5,6,7".
    std::string peers(int node) const
    {
        std::string list;
        for (int r = first_of_node(node); r < first_of_node(node) + size_of_node(node); ++r)
            list += (list.empty() ? "" : ",") + std::to_string(r);
        return list;
    }
};

}  // namespace s4bxi::interpose
