{ notRendered: true }
