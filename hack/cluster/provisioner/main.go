// Command provisioner is the local control plane's volume provisioner: for
// every claim of the StorageClass it serves it creates a hostPath
// PersistentVolume under a directory of the cluster, and deletes released
// ones. Nothing runs in the simulated pods, so the directories stay empty;
// what matters is that claims bind as they do on a real cluster.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

const (
	provisionerAnnotation     = "volume.kubernetes.io/storage-provisioner"
	betaProvisionerAnnotation = "volume.beta.kubernetes.io/storage-provisioner"
	provisionedByAnnotation   = "pv.kubernetes.io/provisioned-by"
)

func main() {
	var name, volumeDir string
	flag.StringVar(&name, "provisioner-name", "kudo-ng.dev/hostpath", "The provisioner name StorageClasses refer to.")
	flag.StringVar(&volumeDir, "volume-dir", "", "The directory that holds the volumes.")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	if volumeDir == "" {
		fmt.Fprintln(os.Stderr, "provisioner: --volume-dir is required")
		os.Exit(2)
	}

	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err == nil {
		p := &provisioner{Client: mgr.GetClient(), name: name, volumeDir: volumeDir}
		err = ctrl.NewControllerManagedBy(mgr).For(&corev1.PersistentVolumeClaim{}).Named("provision").Complete(reconcile.Func(p.provision))
		if err == nil {
			err = ctrl.NewControllerManagedBy(mgr).For(&corev1.PersistentVolume{}).Named("reclaim").Complete(reconcile.Func(p.reclaim))
		}
	}
	if err == nil {
		err = mgr.Start(ctrl.SetupSignalHandler())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "provisioner:", err)
		os.Exit(1)
	}
}

type provisioner struct {
	client.Client
	name      string
	volumeDir string
}

// provision creates a volume for a pending claim that the PV controller has
// handed to this provisioner.
func (p *provisioner) provision(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	claim := &corev1.PersistentVolumeClaim{}
	if err := p.Get(ctx, req.NamespacedName, claim); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if claim.Spec.VolumeName != "" || claim.DeletionTimestamp != nil || claim.Spec.StorageClassName == nil ||
		(claim.Annotations[provisionerAnnotation] != p.name && claim.Annotations[betaProvisionerAnnotation] != p.name) {
		return ctrl.Result{}, nil
	}
	class := &storagev1.StorageClass{}
	if err := p.Get(ctx, client.ObjectKey{Name: *claim.Spec.StorageClassName}, class); err != nil {
		return ctrl.Result{}, err
	}
	reclaimPolicy := corev1.PersistentVolumeReclaimDelete
	if class.ReclaimPolicy != nil {
		reclaimPolicy = *class.ReclaimPolicy
	}

	pvName := "pvc-" + string(claim.UID)
	path := filepath.Join(p.volumeDir, pvName)
	if err := os.MkdirAll(path, 0o755); err != nil {
		return ctrl.Result{}, err
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName, Annotations: map[string]string{provisionedByAnnotation: p.name}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: claim.Spec.Resources.Requests[corev1.ResourceStorage]},
			AccessModes:                   claim.Spec.AccessModes,
			VolumeMode:                    claim.Spec.VolumeMode,
			StorageClassName:              *claim.Spec.StorageClassName,
			PersistentVolumeReclaimPolicy: reclaimPolicy,
			ClaimRef: &corev1.ObjectReference{
				Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID,
			},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: path},
			},
		},
	}
	if err := p.Create(ctx, pv); err != nil && !apierrors.IsAlreadyExists(err) {
		return ctrl.Result{}, err
	}
	ctrl.LoggerFrom(ctx).Info("provisioned", "persistentVolume", pvName, "path", path)
	return ctrl.Result{}, nil
}

// reclaim deletes a released volume of this provisioner whose policy is Delete.
func (p *provisioner) reclaim(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	pv := &corev1.PersistentVolume{}
	if err := p.Get(ctx, req.NamespacedName, pv); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if pv.Annotations[provisionedByAnnotation] != p.name || pv.Status.Phase != corev1.VolumeReleased ||
		pv.Spec.PersistentVolumeReclaimPolicy != corev1.PersistentVolumeReclaimDelete {
		return ctrl.Result{}, nil
	}
	if pv.Spec.HostPath != nil {
		if err := os.RemoveAll(pv.Spec.HostPath.Path); err != nil {
			return ctrl.Result{}, err
		}
	}
	ctrl.LoggerFrom(ctx).Info("deleting released volume", "persistentVolume", pv.Name)
	return ctrl.Result{}, client.IgnoreNotFound(p.Delete(ctx, pv))
}
