"""The standalone service: stdio and HTTP runners, and everything around HTTP (authentication, the Host and Origin
guard, connection and memory bounds, sessions, operator endpoints, replicas and rollouts, the catalog page).
"""
